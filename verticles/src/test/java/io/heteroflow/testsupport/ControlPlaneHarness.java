package io.heteroflow.testsupport;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real control plane (and optionally simulated agents running real processes) in the test JVM, on a
 * fresh PostgreSQL database, with a small blocking HTTP client for the tests. A JUnit extension, started before
 * the class's own {@code @BeforeAll} methods and closed after its tests:
 * {@code @RegisterExtension static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(…));}.
 * A test that needs one of its own starts it in try-with-resources: {@code try (var cp = new ControlPlaneHarness().start())}.
 */
public final class ControlPlaneHarness implements BeforeAllCallback, AfterAllCallback, AutoCloseable {
  public static final String ADMIN = "test-admin-token";
  /** The longest any single wait of a test on a future may take. */
  public static final Duration AWAIT = Duration.ofSeconds(60);
  public Vertx vertx;
  public ControlPlane.Running running;
  public Database database;
  private long ledgerCheckMs = ControlPlane.Options.LEDGER_CHECK_MS;
  private List<SimulatedNode> agents = List.of();
  private SchedulerConfig config = SchedulerConfig.defaults();
  private ControlPlane.ServiceBeats serviceBeats = ControlPlane.ServiceBeats.DEFAULTS;
  private java.time.Clock clock = java.time.Clock.systemUTC();
  private int offlineGraceSeconds = 15;
  private io.heteroflow.protocol.tls.MutualTls agentBridge;
  private final Map<String, String> agentDeployments = new java.util.concurrent.ConcurrentHashMap<>();
  private final Map<String, AgentVerticle> agentsById = new java.util.concurrent.ConcurrentHashMap<>();
  private final HttpClient http = HttpClient.newHttpClient();

  /** A control plane whose heartbeat ledger check runs every {@code ledgerCheckMs} (default 30 s). */
  public ControlPlaneHarness ledgerCheckMs(long ledgerCheckMs) {
    this.ledgerCheckMs = ledgerCheckMs;
    return this;
  }

  /** A control plane on this configuration (default: the packaged conf/config.yaml). */
  public ControlPlaneHarness config(SchedulerConfig other) {
    this.config = other;
    return this;
  }

  /** The inference-service beats and the clock they read (default: SPEC periods, the system clock). */
  public ControlPlaneHarness services(ControlPlane.ServiceBeats beats, java.time.Clock serviceClock) {
    this.serviceBeats = beats;
    this.clock = serviceClock;
    return this;
  }

  /** How long a silent node stays online (default 15 s). */
  public ControlPlaneHarness offlineGraceSeconds(int seconds) {
    this.offlineGraceSeconds = seconds;
    return this;
  }

  /** An agent bridge on a free loopback port, serving {@code tls} (default: none). */
  public ControlPlaneHarness agentBridge(io.heteroflow.protocol.tls.MutualTls tls) {
    this.agentBridge = tls;
    return this;
  }

  /** Simulated agents deployed with the control plane (they run real processes). */
  public ControlPlaneHarness agents(List<SimulatedNode> nodes) {
    this.agents = List.copyOf(nodes);
    return this;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    start();
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    close();
  }

  /** Deploys the control plane and its agents; answers once this control plane leads. */
  public ControlPlaneHarness start() throws Exception {
    database = TestPostgres.freshDatabase();
    return deploy();
  }

  /**
   * A failover: this control plane process dies (its Vert.x closed, its agents with it) and a new one starts on the
   * same database with the same agents; answers once the new one leads.
   */
  public ControlPlaneHarness failover() throws Exception {
    close();
    return deploy();
  }

  /**
   * The host of one simulated agent dies: the agent falls silent at once (no heartbeat or report leaves it) and is
   * undeployed, its processes with it; its node goes offline after the grace period and its tasks are lost.
   */
  public void crashAgent(String nodeId) throws Exception {
    agentsById.remove(nodeId).crash();
    await(vertx.undeploy(agentDeployments.remove(nodeId)));
  }

  private ControlPlaneHarness deploy() throws Exception {
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    ControlPlane.Options options = ControlPlane.Options.defaults(0, ADMIN, config)
        .withHttp("127.0.0.1", 0).withLedgerCheckMs(ledgerCheckMs).withServices(serviceBeats, clock)
        .withOfflineGraceSeconds(offlineGraceSeconds)
        .withAgentBridge(agentBridge == null ? null
            : new io.heteroflow.controlplane.registry.AgentBridgeVerticle.Options("127.0.0.1", 0, agentBridge));
    running = await(ControlPlane.deploy(vertx, database, options, registry));
    eventually(Duration.ofSeconds(20), "this control plane to lead", () -> running.leadership().leading());
    Path logs = Files.createTempDirectory("heteroflow-test-logs-");
    List<Future<String>> deployed = new ArrayList<>();
    for (SimulatedNode node : agents) {
      AgentVerticle agent = new AgentVerticle(node,
          new ProcessExecutor(vertx, logs.resolve(node.id()), Math.max(4, node.cards()), Duration.ofSeconds(2)), 300);
      agentsById.put(node.id(), agent);
      deployed.add(vertx.deployVerticle(agent).onSuccess(id -> agentDeployments.put(node.id(), id)));
    }
    await(Future.all(deployed));
    return this;
  }

  /** A simulated node with {@code cards} cards of 32 GiB (labels, topology and dedication optional). */
  public static SimulatedNode node(String id, GpuVendor vendor, int cards) {
    return new SimulatedNode(id, vendor, vendor.id() + "-card", cards, 32768, 16, 128, 5, 4096,
        List.of(), List.of(), Map.of(), Map.of(), List.of("127.0.0.1"), null);
  }

  public Pool pool() {
    return running.stores().pool();
  }

  /** A plain HTTP exchange; {@code token} may be null (no Authorization header). */
  public HttpResponse<String> call(String method, String path, String token, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + running.httpPort() + path))
        .timeout(Duration.ofSeconds(20))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  public JsonObject json(String method, String path, String token, String body, int expectedStatus) throws Exception {
    HttpResponse<String> response = call(method, path, token, body);
    if (response.statusCode() != expectedStatus) {
      throw new AssertionError(method + " " + path + ": expected " + expectedStatus + " but got "
          + response.statusCode() + " " + response.body());
    }
    return new JsonObject(response.body());
  }

  /** GET as admin, as JSON. */
  public JsonObject get(String path) {
    try {
      return new JsonObject(call("GET", path, ADMIN, null).body());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Submits a task as admin; its id. */
  public String submit(String body) throws Exception {
    return json("POST", "/api/v1/tasks", ADMIN, body, 201).getString("id");
  }

  /** Submits a task as admin and waits until it succeeded; its view. */
  public JsonObject run(String body) throws Exception {
    return awaitStatus(submit(body), "succeeded");
  }

  public JsonObject awaitStatus(String id, String status) throws Exception {
    return awaitTask(id, "status " + status, task -> status.equals(task.getString("status")));
  }

  public JsonObject awaitReason(String id, String code) throws Exception {
    return awaitTask(id, "reason " + code, task -> task.getJsonObject("reason") != null
        && code.equals(task.getJsonObject("reason").getString("code")));
  }

  private JsonObject awaitTask(String id, String what, java.util.function.Predicate<JsonObject> condition)
      throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(Duration.ofSeconds(30), "task " + id + " " + what, () -> {
        last[0] = get("/api/v1/tasks/" + id);
        return condition.test(last[0]);
      });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
    }
    return last[0];
  }

  /** The future's result, waited for on this (test) thread with {@link Future#await}, at most {@link #AWAIT}. */
  public static <T> T await(Future<T> future) throws TimeoutException {
    return future.await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Polls until the condition holds or the timeout passes (no fixed sleeps in tests). */
  public static void eventually(Duration timeout, String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("timed out after " + timeout.toSeconds() + " s waiting for " + what);
  }

  @Override
  public void close() throws Exception {
    if (vertx != null) {
      // the agents first, as dev stops: each releases its node through the control plane still running, so the
      // agents of a failover take their nodes over at once (Vert.x alone undeploys everything at once)
      Future.join(agentDeployments.values().stream().map(vertx::undeploy).toList()).otherwiseEmpty()
          .await(30, TimeUnit.SECONDS);
      agentDeployments.clear();
      agentsById.clear();
      vertx.close().await(30, TimeUnit.SECONDS);
      vertx = null;
    }
  }
}
