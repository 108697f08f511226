package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.AWAIT;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.TestPostgres;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A control plane held in the middle of its start-up (the plugin table locked, so seeding the defaults waits)
 * answers every request at once: live 200, everything else 503 "starting". Once deployed, ready waits for a
 * leader (the leader row locked, so no member can take a term), and is 200 as soon as one leads.
 */
class StartupReadinessTest {
  private static final String TOKEN = "startup-token";
  private final HttpClient http = HttpClient.newHttpClient();
  private Vertx vertx;
  private Pool pool;

  @AfterEach
  void close() throws Exception {
    if (pool != null) {
      pool.close().await(10, TimeUnit.SECONDS);
    }
    if (vertx != null) {
      vertx.close().await(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void requestsDuringStartUpAreAnswered503AndReadyWaitsForALeader() throws Exception {
    Database database = TestPostgres.freshDatabase();
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    pool = database.migrateAndOpen(vertx, 2).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    Transaction seeding = lockedIn("LOCK TABLE plugin_config IN EXCLUSIVE MODE");
    Transaction electing = lockedIn("SELECT term FROM leader WHERE id = 1 FOR UPDATE");
    int port = freePort();
    Future<ControlPlane.Running> deploying = ControlPlane.deploy(vertx, database,
        ControlPlane.Options.defaults(port, TOKEN, SchedulerConfig.defaults()).withHttp("127.0.0.1", port), registry);

    eventually(Duration.ofSeconds(30), "HTTP listening", () -> listening(port));
    HttpResponse<String> ready = call("GET", port, "/health/ready");
    assertEquals(503, ready.statusCode(), ready.body());
    assertEquals("starting", new JsonObject(ready.body()).getString("status"));
    assertEquals(new JsonArray().add("verticles"), new JsonObject(ready.body()).getJsonArray("waiting_for"));
    assertEquals(503, call("HEAD", port, "/health").statusCode());
    assertEquals(503, call("GET", port, "/api/v1/tasks").statusCode(), "the API is not served yet");
    assertEquals(503, call("POST", port, "/api/v1/tasks").statusCode());
    assertEquals(200, call("GET", port, "/health/live").statusCode(), "the process is up");
    assertEquals(200, call("HEAD", port, "/health/live").statusCode());
    assertFalse(deploying.isComplete(), "still starting: the plugin defaults wait for the lock");

    seeding.commit().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    deploying.await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    ready = call("GET", port, "/health/ready");
    assertEquals(503, ready.statusCode(), "no member can take a term yet: " + ready.body());
    assertEquals(new JsonArray(List.of("leader")), new JsonObject(ready.body()).getJsonArray("waiting_for"));
    assertEquals(200, call("GET", port, "/health/live").statusCode());
    assertEquals(200, call("GET", port, "/api/v1/nodes").statusCode(), "the API is served meanwhile");

    electing.commit().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    eventually(Duration.ofSeconds(20), "ready once a member leads",
        () -> uncheckedStatus(port, "/health/ready") == 200);
    assertEquals(200, call("HEAD", port, "/health").statusCode());
  }

  /** A transaction on its own connection that holds the lock {@code sql} takes until it commits. */
  private Transaction lockedIn(String sql) throws Exception {
    SqlConnection connection = pool.getConnection().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    Transaction transaction = connection.begin().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    connection.query(sql).execute().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    transaction.completion().onComplete(done -> connection.close());
    return transaction;
  }

  private HttpResponse<String> call(String method, int port, String path) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5)).header("Authorization", "Bearer " + TOKEN)
        .method(method, HttpRequest.BodyPublishers.noBody()).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private int uncheckedStatus(int port, String path) {
    try {
      return call("GET", port, path).statusCode();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private boolean listening(int port) {
    try {
      call("GET", port, "/health/live");
      return true;
    } catch (ConnectException refused) {
      return false;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
