package io.heteroflow.launcher;

import io.heteroflow.controlplane.store.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * An embedded PostgreSQL server (zonky) for {@code dev} and {@code postgres}. Everything dev writes (the database
 * in {@code pg/}, task logs in {@code task-logs/}, the superuser's password in {@code pg-password}, 0600) lives
 * under one root: a temporary directory removed at close, or {@code --data-dir} kept across runs.
 */
final class EmbeddedDatabase implements AutoCloseable {
  private final EmbeddedPostgres postgres;
  private final Path root;
  private final boolean temporary;
  private final String password;

  private EmbeddedDatabase(EmbeddedPostgres postgres, Path root, boolean temporary, String password) {
    this.postgres = postgres;
    this.root = root;
    this.temporary = temporary;
    this.password = password;
  }

  static EmbeddedDatabase start(Path keepDir) throws IOException {
    return start(keepDir, 0);
  }

  /**
   * {@code port} 0 picks a free port. The superuser postgres logs in with the password in
   * {@code ROOT/pg-password} (see {@link PgAuth}): made before initdb at the first start, so PostgreSQL never
   * trusts anyone; a data directory from before passwords (trust, no file) gets one at its first start here.
   */
  static EmbeddedDatabase start(Path keepDir, int port) throws IOException {
    boolean temporary = keepDir == null;
    Path root = temporary ? Files.createTempDirectory("heteroflow-dev-") : keepDir.toAbsolutePath();
    Path dataDir = Files.createDirectories(root.resolve("pg"));
    Path passwordFile = root.resolve(PgAuth.PASSWORD_FILE);
    String password = PgAuth.read(passwordFile);
    if (password == null && Files.exists(dataDir.resolve("postgresql.conf"))) {
      password = setPassword(dataDir, port, passwordFile);
    } else if (password == null) {
      password = PgAuth.generate();
      PgAuth.write(passwordFile, password);
    }
    EmbeddedPostgres postgres = builder(dataDir, port)
        // zonky runs initdb -A trust ... and then these as --auth=... --pwfile=...: the later --auth wins
        .setLocaleConfig("auth", PgAuth.METHOD)
        .setLocaleConfig("pwfile", passwordFile.toString())
        .setConnectConfig("password", password) // zonky's own readiness check logs in too
        .setDataDirectoryCustomizer(dir -> {
          try {
            PgAuth.requirePasswords(dir.toPath());
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        })
        .start();
    return new EmbeddedDatabase(postgres, root, temporary, password);
  }

  private static EmbeddedPostgres.Builder builder(Path dataDir, int port) {
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
    if (port > 0) {
      builder.setPort(port);
    }
    return builder
        .setDataDirectory(dataDir)
        .setCleanDataDirectory(false)
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .setServerConfig("max_connections", "200")
        // stopped by the command's own shutdown hook (close()), after Vert.x: a hook of its own would stop it while
        // the agents still release their nodes through it
        .setRegisterShutdownHook(false);
  }

  /**
   * A data directory initialised with trust: started as it is once, the superuser given a new password, kept in
   * {@code passwordFile} only once PostgreSQL has it; the next start replaces pg_hba.conf.
   */
  private static String setPassword(Path dataDir, int port, Path passwordFile) throws IOException {
    String password = PgAuth.generate();
    try (EmbeddedPostgres trusting = builder(dataDir, port).start();
         Connection connection = trusting.getPostgresDatabase().getConnection();
         Statement statement = connection.createStatement()) {
      statement.execute("SET password_encryption = '" + PgAuth.METHOD + "'");
      statement.execute("ALTER ROLE postgres PASSWORD '" + password + "'"); // hex: nothing to quote
    } catch (SQLException e) {
      throw new IOException("setting the password of " + dataDir + ": " + e.getMessage(), e);
    }
    PgAuth.write(passwordFile, password);
    return password;
  }

  Database database() {
    return Database.of("localhost", postgres.getPort(), "postgres", "postgres", password);
  }

  /** The URL to give {@code server --pg-url}, less the password (postgres:PASSWORD@ with it). */
  String url() {
    return "postgresql://postgres@localhost:" + postgres.getPort() + "/postgres";
  }

  /** Where the superuser's password is kept. */
  Path passwordFile() {
    return root.resolve(PgAuth.PASSWORD_FILE);
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
