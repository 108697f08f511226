package io.heteroflow.controlplane.registry;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.transport.BridgeTransport;
import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Heartbeat;
import io.heteroflow.protocol.tls.CertAuthority;
import io.heteroflow.protocol.tls.MutualTls;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.Future;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClientOptions;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Agents over the TCP event-bus bridge, against a real control plane on PostgreSQL: mutual TLS with certificates
 * of one cluster CA, each agent's identity its certificate's CN, failover between bridges.
 */
class AgentBridgeTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Path CERTS = certificates();
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .agentBridge(MutualTls.fromDirectory(CERTS, "cp-1"));
  private final List<BridgeTransport> opened = new java.util.ArrayList<>();

  /** A cluster CA with a member (cp-1) and agents; a second CA whose agent nobody trusts. */
  private static Path certificates() {
    try {
      Path dir = Files.createTempDirectory("heteroflow-bridge-certs-");
      CertAuthority ca = CertAuthority.create("cluster", Duration.ofDays(1));
      ca.save(dir, "ca");
      ca.issue("cp-1", "member", List.of("127.0.0.1"), Duration.ofDays(1)).save(dir, "cp-1");
      for (String agent : List.of("bridge-a", "bridge-b", "bridge-c", "bridge-d")) {
        ca.issue(agent, "agent", List.of(), Duration.ofDays(1)).save(dir, agent);
      }
      Path foreign = dir.resolve("foreign");
      CertAuthority other = CertAuthority.create("other", Duration.ofDays(1));
      other.save(foreign, "ca");
      other.issue("bridge-a", "agent", List.of(), Duration.ofDays(1)).save(foreign, "bridge-a");
      Files.copy(dir.resolve("ca.pem"), foreign.resolve("cluster-ca.pem"));
      return dir;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterEach
  void closeTransports() throws Exception {
    for (BridgeTransport transport : opened) {
      await(transport.close());
    }
  }

  /** A transport and the context it lives on (an agent's verticle context), as an agent uses it. */
  private record Client(BridgeTransport transport, io.vertx.core.Context context) {
    <T> T call(java.util.function.Function<BridgeTransport, Future<T>> action) throws Exception {
      io.vertx.core.Promise<T> done = io.vertx.core.Promise.promise();
      context.runOnContext(v -> action.apply(transport).onComplete(done));
      return await(done.future());
    }

    /** Registers {@code nodeId}'s run address (completes once connected), then heartbeats as {@code nodeId}. */
    JsonObject heartbeat(String nodeId) throws Exception {
      JsonObject beat = beat(nodeId);
      return call(transport -> transport.onMessage(BusAddresses.agentRun(nodeId), message -> { })
          .compose(connected -> transport.request(BusAddresses.NODE_HEARTBEAT, beat)));
    }
  }

  private static JsonObject beat(String nodeId) {
    JsonObject beat = new JsonObject().put("node_id", nodeId).put("boot_id", UUID.randomUUID().toString())
        .put("seq", 1).put("gpu_vendor", "nvidia").put("cpu_cores", 8).put("memory_total_gb", 64.0)
        .put("cards", new JsonArray().add(new JsonObject().put("index", 0).put("model", "T4")
            .put("memory_total_mb", 16384)));
    Heartbeat.fromJson(beat); // well-formed: a refusal is for its node id alone
    return beat;
  }

  private BridgeTransport transport(String name, int... ports) {
    return transport(MutualTls.fromDirectory(CERTS, name), ports);
  }

  private BridgeTransport transport(MutualTls tls, int... ports) {
    List<BridgeTransport.Endpoint> endpoints = java.util.Arrays.stream(ports)
        .mapToObj(port -> new BridgeTransport.Endpoint("127.0.0.1", port)).toList();
    BridgeTransport transport = new BridgeTransport(cp.vertx, endpoints, tls.onClient(new NetClientOptions()),
        new BridgeTransport.Settings(3000, 300, new io.heteroflow.agent.transport.Backoff(100, 500, Integer.MAX_VALUE),
            1000, 20));
    opened.add(transport);
    return transport;
  }

  private Client client(String name) {
    return new Client(transport(name, cp.running.agentBridgePort()), cp.vertx.getOrCreateContext());
  }

  private static double refusals(String reason) throws Exception {
    String prefix = "heteroflow_agent_bridge_refusals_total{reason=\"" + reason + "\"";
    return cp.call("GET", "/metrics", null, null).body().lines().filter(line -> line.startsWith(prefix))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
  }

  private static int nodeStatus(String id) throws Exception {
    return cp.call("GET", "/api/v1/nodes/" + id, ControlPlaneHarness.ADMIN, null).statusCode();
  }

  private static JsonObject node(String id) {
    return cp.get("/api/v1/nodes/" + id);
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Test
  void anAgentOverTheBridgeRunsATaskAndServesItsLogs() throws Exception {
    BridgeTransport transport = transport("bridge-a", cp.running.agentBridgePort());
    Path logs = Files.createTempDirectory("heteroflow-bridge-logs-");
    String deployment = await(cp.vertx.deployVerticle(new AgentVerticle(ControlPlaneHarness.node("bridge-a",
        GpuVendor.MUSA, 2), new ProcessExecutor(cp.vertx, logs, 2, Duration.ofSeconds(2)), 300, transport)));
    try {
      eventually(WAIT, "bridge-a online", () -> "online".equals(node("bridge-a").getString("status")));
      JsonObject task = cp.run("{\"name\":\"over-bridge\",\"command\":[\"sh\",\"-c\",\"echo via bridge\"],"
          + "\"gpu_required\":1,\"gpu_type\":\"musa\"}");
      assertEquals("bridge-a", task.getString("node"));
      assertEquals("via bridge\n", cp.call("GET", "/api/v1/tasks/" + task.getString("id") + "/logs",
          ControlPlaneHarness.ADMIN, null).body());
    } finally {
      await(cp.vertx.undeploy(deployment));
    }
  }

  @Test
  void aRequestForAnotherNodeIsRefusedWith403NamingNodeIdAndCounted() throws Exception {
    Client b = client("bridge-b");
    assertTrue(b.heartbeat("bridge-b").getBoolean("applied"), "its own node: applied");
    double before = refusals("node_id");
    for (String address : List.of(BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_BEAT, BusAddresses.TASK_CLAIM,
        BusAddresses.TASK_REPORT)) {
      JsonObject body = address.equals(BusAddresses.NODE_HEARTBEAT) ? beat("forged-node")
          : address.equals(BusAddresses.NODE_BEAT) ? new JsonObject().put("v", 1).put("node_id", "forged-node")
              .put("boot_id", "b").put("seq", 1).put("active_tasks", new io.vertx.core.json.JsonArray())
          : new JsonObject().put("task_id", UUID.randomUUID().toString()).put("node_id", "forged-node")
              .put("outcome", "succeeded");
      ReplyException failure = assertThrows(ReplyException.class, () -> b.call(t -> t.request(address, body)));
      assertEquals(403, failure.failureCode(), address);
      assertTrue(failure.getMessage().startsWith("node_id: this connection is agent bridge-b"), failure.getMessage());
    }
    assertEquals(before + 4, refusals("node_id"));
    assertEquals(404, nodeStatus("forged-node"), "the forged heartbeat wrote nothing");
  }

  @Test
  void anAgentReceivesItsOwnAddressesOnlyAndMayNotPublish() throws Exception {
    Client c = client("bridge-c");
    c.heartbeat("bridge-c");
    double before = refusals("address");
    c.call(t -> t.onMessage(BusAddresses.agentStop("bridge-b"), message -> { }));
    c.call(t -> t.onRequest(BusAddresses.agentLogs("bridge-c"),
        body -> Future.succeededFuture(new JsonObject().put("task_id", body.getString("task_id")).put("found", false))));
    // the control plane asks bridge-c for logs over the bridge: the reply comes back through the bridge
    eventually(WAIT, "bridge-c's logs consumer reachable", () -> {
      try {
        JsonObject answer = await(cp.vertx.eventBus().<JsonObject>request(BusAddresses.agentLogs("bridge-c"),
            new JsonObject().put("task_id", "t-1"), new DeliveryOptions().setSendTimeout(1000))).body();
        return answer.getString("task_id").equals("t-1");
      } catch (Exception e) {
        return false;
      }
    });
    assertEquals(before + 1, refusals("address"));
    ReplyException none = assertThrows(ReplyException.class,
        () -> await(cp.vertx.eventBus().request(BusAddresses.agentStop("bridge-b"), new JsonObject(),
            new DeliveryOptions().setSendTimeout(1000))));
    assertEquals(ReplyFailure.NO_HANDLERS, none.failureType(), "bridge-c did not register bridge-b's stop address");
  }

  @Test
  void aCertificateOfAnotherCaOrOfAMemberGetsNoMessageThrough() throws Exception {
    Path foreign = CERTS.resolve("foreign");
    MutualTls other = MutualTls.fromDirectory(foreign, "bridge-a");
    Client stranger = new Client(transport(other, cp.running.agentBridgePort()), cp.vertx.getOrCreateContext());
    Client member = client("cp-1");
    double certificates = refusals("certificate");
    Thread.sleep(1500);
    assertFalse(stranger.transport().connected(), "a certificate of another CA fails the TLS handshake");
    assertEquals(0, stranger.transport().connections());
    assertThrows(ReplyException.class, () -> stranger.call(t -> t.request(BusAddresses.NODE_HEARTBEAT,
        beat("bridge-a"))));
    member.call(t -> { t.onMessage(BusAddresses.agentRun("cp-1"), message -> { }); return Future.succeededFuture(); });
    eventually(WAIT, "the member's connection refused and closed", () -> {
      try {
        return refusals("certificate") > certificates && !member.transport().connected();
      } catch (Exception e) {
        return false;
      }
    });
  }

  @Test
  void anAgentFailsOverToAnotherBridgeReregistersAndKeepsRunningTasks() throws Exception {
    int firstPort = freePort();
    int secondPort = freePort();
    ControlPlaneMetrics metrics = new ControlPlaneMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    MutualTls server = MutualTls.fromDirectory(CERTS, "cp-1");
    String first = await(cp.vertx.deployVerticle(new AgentBridgeVerticle(
        new AgentBridgeVerticle.Options("127.0.0.1", firstPort, server), metrics)));
    BridgeTransport transport = transport("bridge-d", firstPort, secondPort); // the second is down: it tries on
    Path logs = Files.createTempDirectory("heteroflow-bridge-logs-");
    String agent = await(cp.vertx.deployVerticle(new AgentVerticle(ControlPlaneHarness.node("bridge-d",
        GpuVendor.ASCEND, 1), new ProcessExecutor(cp.vertx, logs, 2, Duration.ofSeconds(2)), 300, transport)));
    try {
      eventually(WAIT, "bridge-d online", () -> "online".equals(node("bridge-d").getString("status")));
      assertEquals(1, transport.connections());
      String second = await(cp.vertx.deployVerticle(new AgentBridgeVerticle(
          new AgentBridgeVerticle.Options("127.0.0.1", secondPort, server), metrics)));
      String task = cp.submit("{\"name\":\"across\",\"command\":[\"sh\",\"-c\",\"sleep 2; echo done\"],"
          + "\"gpu_required\":1,\"gpu_type\":\"ascend\"}");
      cp.awaitStatus(task, "running");
      await(cp.vertx.undeploy(first)); // the bridge it is connected to goes away
      eventually(WAIT, "reconnected to the second bridge", () -> transport.connections() == 2 && transport.connected());
      JsonObject done = cp.awaitStatus(task, "succeeded"); // its report went over the second bridge
      assertEquals("done\n", cp.call("GET", "/api/v1/tasks/" + task + "/logs", ControlPlaneHarness.ADMIN, null).body());
      String after = cp.run("{\"name\":\"after\",\"command\":[\"true\"],\"gpu_required\":1,"
          + "\"gpu_type\":\"ascend\"}").getString("node");
      assertEquals("bridge-d", after, "a run reaches it over the second bridge");
      assertEquals("bridge-d", done.getString("node"));
      await(cp.vertx.undeploy(second));
    } finally {
      await(cp.vertx.undeploy(agent));
    }
  }
}
