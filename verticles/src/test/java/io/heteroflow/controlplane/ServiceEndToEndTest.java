package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Inference services end to end (issue 17): a control plane on real PostgreSQL with simulated agents that run
 * real processes, its service beats fast (rebuild every second) so "within two beats" is a second or two. Each test
 * has its own pool of nodes (label {@code pool}).
 */
class ServiceEndToEndTest {
  static final String ADMIN = ControlPlaneHarness.ADMIN;
  static final long BEAT_MS = 1000;
  static final Duration WAIT = Duration.ofSeconds(60);
  static final Path UTIL = tempDir();
  static final Path PIDS = tempDir();

  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .services(new ControlPlane.ServiceBeats(BEAT_MS, 500, 500, 1500, 3), Clock.systemUTC())
      .offlineGraceSeconds(3)
      .agents(List.of(node("kill-1", "kill", 2), node("kill-2", "kill", 2), node("lost-1", "lost", 1),
          node("lost-2", "lost", 1), node("crash-1", "crash", 1), node("scale-1", "scale", 2),
          node("scale-2", "scale", 2), node("auto-1", "auto", 2).withUtilizationFile(UTIL.resolve("auto-1.json")),
          node("auto-2", "auto", 2).withUtilizationFile(UTIL.resolve("auto-2.json"))));

  static SimulatedNode node(String id, String pool, int cards) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", cards, 81920, 16, 128, 5, 4096, List.of(),
        List.of(), Map.of("pool", pool), Map.of(), List.of("127.0.0.1"), null);
  }

  static Path tempDir() {
    try {
      return Files.createTempDirectory("heteroflow-services-");
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @BeforeAll
  static void agentsRegistered() throws Exception {
    eventually(WAIT, "nine agents registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 9);
  }

  /** A service of {@code replicas} one-card replicas in {@code pool} running {@code script}; answers its view. */
  static JsonObject service(String name, String pool, int replicas, String script, String extra) throws Exception {
    String template = "{\"command\":[\"sh\",\"-c\",\"" + script + "\"],\"gpu_required\":1,\"node_selector\":{\"pool\":\""
        + pool + "\"}}";
    return cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"" + name + "\",\"type\":\"inference\",\"replicas\":"
        + replicas + ",\"template\":" + template + extra + "}", 201);
  }

  static JsonObject awaitService(String id, String what, Predicate<JsonObject> condition) throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(WAIT, "service " + id + " " + what, () -> condition.test(last[0] = cp.get("/api/v1/groups/" + id)));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
    }
    return last[0];
  }

  static JsonObject slot(JsonObject view, int slot) {
    for (Object each : view.getJsonArray("slots")) {
      if (((JsonObject) each).getInteger("slot") == slot) {
        return (JsonObject) each;
      }
    }
    return null;
  }

  static boolean running(JsonObject view, int count) {
    return view.getJsonObject("replicas").getInteger("running") == count;
  }

  static Row task(String id) throws Exception {
    return ControlPlaneHarness.await(cp.pool().preparedQuery("SELECT status, reason_code, created_at, finished_at,"
        + " node_id FROM tasks WHERE id = $1").execute(Tuple.of(UUID.fromString(id)))).iterator().next();
  }

  /** Whether the task was stopped for {@code code} (the stop's own reason, in its ledger). */
  static boolean stoppedFor(String taskId, String code) throws Exception {
    return ControlPlaneHarness.await(cp.pool().preparedQuery("SELECT count(*) AS n FROM task_events WHERE task_id = $1"
        + " AND to_status = 'stopping' AND code = $2").execute(Tuple.of(UUID.fromString(taskId), code)))
        .iterator().next().getLong("n") == 1;
  }

  @Test
  void aKilledReplicaIsRebuiltWithinTwoBeatsOnItsOwnNode() throws Exception {
    String script = "echo $$ > " + PIDS + "/$HETEROFLOW_TASK_ID.pid; exec sleep 600";
    JsonObject created = service("kill-me", "kill", 2, script, "");
    assertEquals("service", created.getString("kind"));
    String id = created.getString("id");
    JsonObject up = awaitService(id, "with 2 replicas running", view -> running(view, 2));
    assertEquals("Running", up.getString("status"));
    assertNotEquals(slot(up, 0).getString("node"), slot(up, 1).getString("node"), "replicas prefer different nodes");
    assertNotEquals(slot(up, 0).getInteger("host_port"), null, "each replica gets its host port");

    String victim = slot(up, 0).getString("task_id");
    JsonObject replica = cp.get("/api/v1/tasks/" + victim);
    assertEquals(id, replica.getString("service_id"));
    assertEquals(0, replica.getInteger("replica_slot"));
    assertEquals("kill-me-0", replica.getString("name"));
    Path pidFile = PIDS.resolve(victim + ".pid");
    eventually(WAIT, "the replica wrote its pid", () -> Files.exists(pidFile));
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    assertTrue(ProcessHandle.of(pid).orElseThrow().destroyForcibly(), "kill -9 of the replica's process");

    JsonObject rebuilt = awaitService(id, "with slot 0 rebuilt and running", view -> slot(view, 0)
        .getInteger("generation") == 1 && "running".equals(slot(view, 0).getString("status")) && running(view, 2));
    assertEquals(1L, rebuilt.getLong("rebuilds"));
    Row old = task(victim);
    assertEquals("failed", old.getString("status"));
    Row next = task(slot(rebuilt, 0).getString("task_id"));
    Duration gap = Duration.between(old.getOffsetDateTime("finished_at"), next.getOffsetDateTime("created_at"));
    assertTrue(gap.toMillis() <= 2 * BEAT_MS + 200, "re-created " + gap.toMillis() + " ms after the failure (2 beats: "
        + 2 * BEAT_MS + " ms)");
    assertEquals(slot(up, 1).getString("task_id"), slot(rebuilt, 1).getString("task_id"), "slot 1 was left alone");
  }

  @Test
  void aReplicaLostWithItsNodeIsRecreatedElsewhere() throws Exception {
    String id = service("lose-me", "lost", 1, "exec sleep 600", "").getString("id");
    JsonObject up = awaitService(id, "running", view -> running(view, 1));
    String first = slot(up, 0).getString("task_id");
    String lostNode = slot(up, 0).getString("node");
    cp.crashAgent(lostNode);
    JsonObject moved = awaitService(id, "rebuilt on the other node", view -> slot(view, 0).getInteger("generation") == 1
        && "running".equals(slot(view, 0).getString("status")));
    assertNotEquals(lostNode, slot(moved, 0).getString("node"));
    Row old = task(first);
    assertEquals("failed", old.getString("status"));
    assertEquals("NodeLost", old.getString("reason_code"));
    assertEquals(1L, moved.getLong("rebuilds"));
  }

  @Test
  void aReplicaThatKeepsFailingBacksOffAndTheServiceShowsDegraded() throws Exception {
    String id = service("crash-loop", "crash", 1, "exit 3", "").getString("id");
    JsonObject degraded = awaitService(id, "degraded", view -> "Degraded".equals(view.getString("status"))
        && slot(view, 0).getString("next_try_at") != null);
    String reason = degraded.getJsonObject("reason").getString("message");
    assertTrue(reason.contains("0/1 replicas running") && reason.contains("in a row") && reason.contains("exit code 3"),
        reason);
    Thread.sleep(5 * BEAT_MS);
    JsonObject later = cp.get("/api/v1/groups/" + id);
    // the first failure is retried at once, the second waits 10 s: five beats later there are still only two
    assertTrue(slot(later, 0).getInteger("generation") <= 2, "backed off, not rebuilt every beat: " + later);
    assertEquals("Degraded", later.getString("status"));
    cp.json("POST", "/api/v1/groups/" + id + "/stop", ADMIN, null, 202);
    assertEquals("Stopped", cp.get("/api/v1/groups/" + id).getString("status"));
  }

  @Test
  void scalingByHandAddsSlotsAndRemovesTheNewestFirst() throws Exception {
    String id = service("scale-me", "scale", 1, "exec sleep 600", "").getString("id");
    awaitService(id, "running", view -> running(view, 1));
    JsonObject three = cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN, "{\"replicas\":3}", 200);
    assertEquals(3, three.getJsonObject("replicas").getInteger("desired"));
    JsonObject up = awaitService(id, "3 running", view -> running(view, 3));
    String first = slot(up, 0).getString("task_id");
    cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN, "{\"replicas\":1}", 200);
    JsonObject down = awaitService(id, "1 running", view -> running(view, 1)
        && "stopped".equals(slot(view, 2).getString("status")) && "stopped".equals(slot(view, 1).getString("status")));
    assertEquals(first, slot(down, 0).getString("task_id"), "the oldest slot stays");
    assertTrue(stoppedFor(slot(down, 2).getString("task_id"), "ScaledDown"), "slot 2 was scaled down");
    assertEquals(0L, down.getLong("rebuilds"), "a scale-down is not a rebuild");
    JsonArray events = cp.get("/api/v1/groups/" + id + "/events").getJsonArray("items");
    assertEquals("scale", events.getJsonObject(0).getString("kind"));
    assertEquals(1, events.getJsonObject(0).getJsonObject("details").getInteger("to"));

    JsonObject refused = cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN, "{\"replicas\":-1}", 400);
    assertEquals("replicas", refused.getString("field"));
    cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN, "{\"replicas\":2,\"extra\":1}", 400);
  }

  @Test
  void theAutoscalerFollowsSimulatedUtilisationUpAndDown() throws Exception {
    Files.writeString(UTIL.resolve("auto-1.json"), "30");
    Files.writeString(UTIL.resolve("auto-2.json"), "30");
    String id = service("auto-me", "auto", 1, "exec sleep 600",
        ",\"autoscale\":{\"min\":1,\"max\":3,\"target_gpu_utilization_percent\":50}").getString("id");
    awaitService(id, "running", view -> running(view, 1));
    Files.writeString(UTIL.resolve("auto-1.json"), "{\"all\": 92}");
    Files.writeString(UTIL.resolve("auto-2.json"), "{\"all\": 92}");
    JsonObject up = awaitService(id, "scaled up to max 3", view -> running(view, 3)
        && view.getJsonObject("replicas").getInteger("desired") == 3);
    JsonArray events = cp.get("/api/v1/groups/" + id + "/events").getJsonArray("items");
    JsonObject decision = events.getJsonObject(0);
    assertEquals("autoscale", decision.getString("kind"));
    assertTrue(decision.getJsonObject("details").getDouble("mean_gpu_utilization_percent") > 60, decision.encode());
    assertEquals(3, decision.getJsonObject("details").getInteger("to"));
    assertEquals(3, up.getJsonObject("replicas").getInteger("desired"), "never above max");

    Files.writeString(UTIL.resolve("auto-1.json"), "5");
    Files.writeString(UTIL.resolve("auto-2.json"), "5");
    JsonObject down = awaitService(id, "scaled down to min 1", view -> running(view, 1)
        && view.getJsonObject("replicas").getInteger("desired") == 1);
    assertTrue(stoppedFor(slot(down, 2).getString("task_id"), "ScaledDown"), "the newest went first");
    long downs = cp.get("/api/v1/groups/" + id + "/events").getJsonArray("items").stream()
        .filter(each -> ((JsonObject) each).getString("message").startsWith("autoscale down")).count();
    assertEquals(2, downs, "one replica per decision, never below min");
  }

  @Test
  void aServiceIsRefusedFieldByField() throws Exception {
    String template = "{\"command\":[\"true\"]}";
    assertEquals("type", cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"s\",\"type\":\"training\","
        + "\"replicas\":1,\"template\":" + template + "}", 400).getString("field"));
    assertEquals("template", cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"s\",\"type\":\"inference\","
        + "\"replicas\":1}", 400).getString("field"));
    assertEquals("autoscale.max", cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"s\",\"type\":\"inference\","
        + "\"replicas\":1,\"template\":" + template + ",\"autoscale\":{\"min\":2,\"max\":1,"
        + "\"target_gpu_utilization_percent\":50}}", 400).getString("field"));
    assertEquals("windows.open[0].from", cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"s\",\"type\":"
        + "\"inference\",\"replicas\":1,\"template\":" + template + ",\"windows\":{\"open\":[{\"days\":[\"mon\"],"
        + "\"from\":\"8am\",\"to\":\"20:00\"}],\"action\":\"pause\"}}", 400).getString("field"));
    assertEquals("template.gpu_required", cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"s\",\"type\":"
        + "\"inference\",\"replicas\":1,\"template\":{\"command\":[\"true\"],\"gpu_required\":-1}}", 400).getString("field"));
    long groups = ControlPlaneHarness.await(cp.pool().query("SELECT count(*) AS n FROM task_groups WHERE name = 's'")
        .execute()).iterator().next().getLong("n");
    assertEquals(0, groups, "nothing is written on a refusal");
  }

  @Test
  void aGangIsNotScaled() throws Exception {
    JsonObject gang = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"g\",\"type\":\"inference\",\"members\":"
        + "{\"template\":{\"command\":[\"true\"],\"node_selector\":{\"pool\":\"none\"}},\"count\":2}}", 201);
    assertEquals("gang", gang.getString("kind"));
    assertEquals("not_a_service", cp.json("PUT", "/api/v1/groups/" + gang.getString("id") + "/replicas", ADMIN,
        "{\"replicas\":3}", 409).getString("code"));
    cp.json("POST", "/api/v1/groups/" + gang.getString("id") + "/stop", ADMIN, null, 202);
  }
}
