package io.heteroflow.bench;

import io.heteroflow.controlplane.store.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The PostgreSQL server the benchmark runs on, and a fresh database on it per use: an embedded server
 * (zonky, configured as the launcher's {@code dev} configures it: fsync on, synchronous_commit on,
 * max_connections 200; plus pg_stat_statements preloaded, for the per-statement breakdown) in a temporary directory, or an external server given by URL. Databases it created
 * are dropped at close.
 */
final class BenchDatabases implements AutoCloseable {
  private final Database admin;
  private final EmbeddedPostgres embedded;
  private final Path root;
  private final List<String> created = new ArrayList<>();
  private String description;

  private BenchDatabases(Database admin, EmbeddedPostgres embedded, Path root) {
    this.admin = admin;
    this.embedded = embedded;
    this.root = root;
  }

  static BenchDatabases embedded(java.util.Map<String, String> extraSettings) throws IOException {
    Path root = Files.createTempDirectory("heteroflow-bench-");
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
    extraSettings.forEach(builder::setServerConfig);
    EmbeddedPostgres postgres = builder
        .setDataDirectory(Files.createDirectories(root.resolve("pg")))
        .setCleanDataDirectory(false)
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        .setServerConfig("max_connections", "200")
        // per-statement server time of the drain (PgStatistics reads it); not in dev's configuration
        .setServerConfig("shared_preload_libraries", "pg_stat_statements")
        .start();
    return new BenchDatabases(Database.of("localhost", postgres.getPort(), "postgres", "postgres", "postgres"),
        postgres, root);
  }

  static BenchDatabases external(String url) {
    Database admin;
    try {
      admin = Database.fromUrl(url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--pg-url: " + e.getMessage(), e);
    }
    return new BenchDatabases(admin, null, null);
  }

  /** A new, empty database on the server. */
  Database fresh() {
    String name = "hf_bench_" + ProcessHandle.current().pid() + "_" + (created.size() + 1);
    execute(BenchSql.createDatabase(name));
    created.add(name);
    return Database.of(admin.options().getHost(), admin.options().getPort(), name, admin.options().getUser(),
        admin.options().getPassword());
  }

  /** "embedded 17.5, fsync on, synchronous_commit on" (what the numbers were measured on). */
  String describe() {
    if (description == null) {
      try (Connection connection = connect(); Statement statement = connection.createStatement()) {
        List<String> parts = new ArrayList<>();
        parts.add((embedded != null ? "embedded " : "external ") + show(statement, "server_version"));
        parts.add("fsync " + show(statement, "fsync"));
        parts.add("synchronous_commit " + show(statement, "synchronous_commit"));
        parts.add("shared_buffers " + show(statement, "shared_buffers"));
        parts.add("autovacuum_naptime " + show(statement, "autovacuum_naptime"));
        description = String.join(", ", parts);
      } catch (SQLException e) {
        throw new IllegalStateException("cannot reach PostgreSQL at " + admin.jdbcUrl() + ": " + e.getMessage(), e);
      }
    }
    return description;
  }

  private static String show(Statement statement, String setting) throws SQLException {
    try (ResultSet rows = statement.executeQuery(BenchSql.show(setting))) {
      rows.next();
      return rows.getString(1);
    }
  }

  private void execute(String sql) {
    try (Connection connection = connect(); Statement statement = connection.createStatement()) {
      statement.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + " failed on " + admin.jdbcUrl() + ": " + e.getMessage(), e);
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(admin.jdbcUrl(), admin.options().getUser(), admin.options().getPassword());
  }

  @Override
  public void close() throws IOException {
    for (String name : embedded == null ? created : List.<String>of()) { // an embedded server goes as a whole
      try {
        execute(BenchSql.dropDatabase(name));
      } catch (RuntimeException e) {
        System.err.println("heteroflow bench: could not drop database " + name + ": " + e.getMessage());
      }
    }
    if (embedded != null) {
      embedded.close();
      try (Stream<Path> files = Files.walk(root)) {
        files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      } catch (IOException | java.io.UncheckedIOException raced) {
        // PostgreSQL may still write its last files just after the stop: a temp directory left behind is harmless
      }
    }
  }
}
