package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /health/live} and {@code /health/ready} (alias {@code /health}) on a running control plane: live is 200
 * whatever PostgreSQL does; ready is 200 with the database reachable and a leader, 503 naming the database while
 * no connection to it can be made, and 200 again once it can. GET and HEAD alike. (Start-up and the leader:
 * StartupReadinessTest.)
 */
class HealthTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();

  @Test
  void liveAndReadyAnswerGetAndHeadOnceTheControlPlaneLeads() throws Exception {
    for (String path : new String[] {"/health/live", "/health/ready", "/health"}) {
      HttpResponse<String> get = cp.call("GET", path, null, null);
      assertEquals(200, get.statusCode(), path + ": " + get.body());
      assertEquals("UP", new JsonObject(get.body()).getString("status"), path);
      HttpResponse<String> head = cp.call("HEAD", path, null, null);
      assertEquals(200, head.statusCode(), "HEAD " + path);
      assertEquals("", head.body(), "HEAD " + path + " has no body");
    }
    JsonObject ready = new JsonObject(cp.call("GET", "/health/ready", null, null).body());
    assertEquals(true, ready.getBoolean("ready"));
    assertEquals("UP", ready.getString("database"));
  }

  @Test
  void readyNamesTheDatabaseWhileItCannotBeReachedAndRecoversWithIt() throws Exception {
    String name = cp.database.options().getDatabase();
    try {
      admin("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS false");
      admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "'");
      HttpResponse<String> ready = cp.call("GET", "/health/ready", null, null);
      assertEquals(503, ready.statusCode(), ready.body());
      JsonObject body = new JsonObject(ready.body());
      assertEquals(false, body.getBoolean("ready"));
      assertTrue(body.getJsonArray("waiting_for").contains("database"), body.encode());
      assertEquals(503, cp.call("GET", "/health", null, null).statusCode(), "the alias is the readiness check");
      assertEquals(503, cp.call("HEAD", "/health/ready", null, null).statusCode());
      HttpResponse<String> live = cp.call("GET", "/health/live", null, null);
      assertEquals(200, live.statusCode(), "the process is up: " + live.body());
    } finally {
      admin("ALTER DATABASE " + name + " WITH ALLOW_CONNECTIONS true");
    }
    eventually(Duration.ofSeconds(30), "ready again", () -> status("/health/ready") == 200);
  }

  private static int status(String path) {
    try {
      return cp.call("GET", path, null, null).statusCode();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** A statement on the server's admin database (this test's own database refuses connections meanwhile). */
  private static void admin(String sql) throws Exception {
    Database server = TestPostgres.server();
    try (Connection connection = DriverManager.getConnection(server.jdbcUrl(), server.options().getUser(),
        server.options().getPassword()); Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }
}
