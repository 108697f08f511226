package io.heteroflow.launcher;

import io.heteroflow.controlplane.store.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * An embedded PostgreSQL server (zonky) for {@code dev}. Everything dev writes (the database in {@code pg/},
 * task logs in {@code task-logs/}) lives under one root: a temporary directory removed at close, or
 * {@code --data-dir} kept across runs.
 */
final class EmbeddedDatabase implements AutoCloseable {
  private final EmbeddedPostgres postgres;
  private final Path root;
  private final boolean temporary;

  private EmbeddedDatabase(EmbeddedPostgres postgres, Path root, boolean temporary) {
    this.postgres = postgres;
    this.root = root;
    this.temporary = temporary;
  }

  static EmbeddedDatabase start(Path keepDir) throws IOException {
    return start(keepDir, 0);
  }

  /** {@code port} 0 picks a free port. */
  static EmbeddedDatabase start(Path keepDir, int port) throws IOException {
    boolean temporary = keepDir == null;
    Path root = temporary ? Files.createTempDirectory("heteroflow-dev-") : keepDir.toAbsolutePath();
    Path dataDir = Files.createDirectories(root.resolve("pg"));
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
    if (port > 0) {
      builder.setPort(port);
    }
    EmbeddedPostgres postgres = builder
        .setDataDirectory(dataDir)
        .setCleanDataDirectory(false)
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .setServerConfig("max_connections", "200")
        // stopped by the command's own shutdown hook (close()), after Vert.x: a hook of its own would stop it while
        // the agents still release their nodes through it
        .setRegisterShutdownHook(false)
        .start();
    return new EmbeddedDatabase(postgres, root, temporary);
  }

  Database database() {
    return Database.of("localhost", postgres.getPort(), "postgres", "postgres", "postgres");
  }

  Path root() {
    return root;
  }

  Path taskLogs() throws IOException {
    return Files.createDirectories(root.resolve("task-logs"));
  }

  @Override
  public void close() throws IOException {
    postgres.close();
    if (temporary) {
      // PostgreSQL may still write its last files (pg_stat) just after the stop returns: retry briefly
      for (int attempt = 0; attempt < 50 && Files.exists(root); attempt++) {
        try (Stream<Path> files = Files.walk(root)) {
          files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | java.io.UncheckedIOException raced) {
          // a file vanished while walking: walk again
        }
        if (Files.exists(root)) {
          try {
            Thread.sleep(100);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }
  }
}
