package io.heteroflow.testsupport;

import io.heteroflow.controlplane.store.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The real PostgreSQL the tests use, one per test JVM: {@code HETEROFLOW_TEST_PG_URL} when set, else a
 * Testcontainers PostgreSQL when a Docker engine answers, else an embedded PostgreSQL (zonky). Each caller of
 * {@link #freshDatabase()} gets a database of its own, so test classes never see each other's rows. The
 * embedded server commits as production does: {@code synchronous_commit} on (zonky's default is off).
 */
public final class TestPostgres {
  private static final AtomicInteger DATABASES = new AtomicInteger();
  private static Database server;
  private static String source;

  private TestPostgres() {}

  public static synchronized Database server() {
    if (server == null) {
      server = start();
    }
    return server;
  }

  /** Where the test database comes from: "external", "testcontainers" or "embedded". */
  public static synchronized String source() {
    server();
    return source;
  }

  public static Database freshDatabase() {
    Database admin = server();
    String name = "hf_test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
    try (Connection connection = DriverManager.getConnection(admin.jdbcUrl(), admin.options().getUser(),
        admin.options().getPassword()); Statement statement = connection.createStatement()) {
      statement.execute("CREATE DATABASE " + name);
    } catch (Exception e) {
      throw new IllegalStateException("cannot create test database " + name, e);
    }
    return Database.of(admin.options().getHost(), admin.options().getPort(), name, admin.options().getUser(),
        admin.options().getPassword());
  }

  private static Database start() {
    String url = System.getenv("HETEROFLOW_TEST_PG_URL");
    if (url != null && !url.isBlank()) {
      source = "external";
      return Database.fromUrl(url);
    }
    if (dockerAnswers()) {
      PostgreSQLContainer container = new PostgreSQLContainer("postgres:17");
      container.start();
      Runtime.getRuntime().addShutdownHook(new Thread(container::stop));
      source = "testcontainers";
      return Database.of(container.getHost(), container.getMappedPort(5432), container.getDatabaseName(),
          container.getUsername(), container.getPassword());
    }
    try {
      // zonky turns synchronous_commit off by default; the tests run with production's durability
      EmbeddedPostgres embedded = EmbeddedPostgres.builder().setServerConfig("max_connections", "300")
          .setServerConfig("synchronous_commit", "on").start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          embedded.close();
        } catch (Exception ignored) {
          // the JVM is going away
        }
      }));
      source = "embedded";
      return Database.of("localhost", embedded.getPort(), "postgres", "postgres", "postgres");
    } catch (Exception e) {
      throw new IllegalStateException("cannot start embedded PostgreSQL", e);
    }
  }

  private static boolean dockerAnswers() {
    if (System.getenv("DOCKER_HOST") == null && !java.nio.file.Files.exists(java.nio.file.Path.of("/var/run/docker.sock"))) {
      return false;
    }
    try {
      return DockerClientFactory.instance().isDockerAvailable();
    } catch (Throwable e) {
      return false;
    }
  }
}
