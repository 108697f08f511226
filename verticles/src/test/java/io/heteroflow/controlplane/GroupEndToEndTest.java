package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Task groups end to end in one JVM (SPEC §9): control plane on real PostgreSQL, simulated agents on the event bus
 * running real processes. Each test has its own pool of 2-card nodes (label {@code pool}).
 */
class GroupEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final Duration WAIT = Duration.ofSeconds(60);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      node("env-1", "env"), node("env-2", "env"), node("life-1", "life"), node("life-2", "life"),
      node("stop-1", "stop"), node("stop-2", "stop"), node("wait-1", "wait"), node("pre-1", "pre"),
      node("pre-2", "pre")));

  private static SimulatedNode node(String id, String pool) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", 2, 81920, 16, 128, 5, 4096, List.of(), List.of(),
        Map.of("pool", pool), Map.of(), List.of("127.0.0.1"), null);
  }

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "nine agents registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 9);
  }

  /** A group of {@code count} 2-card members running {@code script} (sh -c) in {@code pool}. */
  static JsonObject group(String name, String pool, int count, String script, String extra) throws Exception {
    String template = "{\"command\":[\"sh\",\"-c\",\"" + script + "\"],\"gpu_required\":2,\"node_selector\":{\"pool\":\""
        + pool + "\"}}";
    return cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"" + name + "\",\"type\":\"training\",\"members\":"
        + "{\"template\":" + template + ",\"count\":" + count + "}" + extra + "}", 201);
  }

  static JsonObject awaitGroup(String id, String what, Predicate<JsonObject> condition) throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(WAIT, "group " + id + " " + what, () -> condition.test(last[0] = cp.get("/api/v1/groups/" + id)));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
    }
    return last[0];
  }

  static String logs(String taskId) throws Exception {
    return cp.call("GET", "/api/v1/tasks/" + taskId + "/logs", ADMIN, null).body();
  }

  @Test
  void everyMemberGetsItsRankAndTheMastersAddressAndPort() throws Exception {
    String script = "echo RANK=$RANK WORLD_SIZE=$WORLD_SIZE NNODES=$NNODES NODE_RANK=$NODE_RANK"
        + " LOCAL_WORLD_SIZE=$LOCAL_WORLD_SIZE MASTER=$MASTER_ADDR:$MASTER_PORT BACKEND=$HETEROFLOW_DIST_BACKEND"
        + " GROUP=$HETEROFLOW_GROUP_ID CARDS=$CUDA_VISIBLE_DEVICES";
    JsonObject created = group("env-check", "env", 2, script, "");
    String id = created.getString("id");
    assertEquals("pending", created.getString("status"));
    assertEquals(2, created.getJsonArray("members").size());
    JsonObject done = awaitGroup(id, "succeeded", group -> "succeeded".equals(group.getString("status")));
    JsonObject master = done.getJsonObject("master");
    assertEquals("127.0.0.1", master.getString("addr"));
    Set<String> nodes = new HashSet<>();
    for (Object each : done.getJsonArray("members")) {
      JsonObject member = (JsonObject) each;
      int rank = member.getInteger("rank");
      nodes.add(member.getString("node"));
      JsonObject task = cp.get("/api/v1/tasks/" + member.getString("task_id"));
      assertEquals(id, task.getString("group_id"));
      assertEquals(rank, task.getInteger("rank"));
      String log = logs(member.getString("task_id"));
      assertTrue(log.contains("RANK=" + rank + " WORLD_SIZE=2 NNODES=2 NODE_RANK=" + rank + " LOCAL_WORLD_SIZE=2 MASTER=127.0.0.1:"
          + master.getInteger("port") + " BACKEND=nccl GROUP=" + id), log);
    }
    assertEquals(Set.of("env-1", "env-2"), nodes, "one 2-card member per 2-card node");
    assertEquals(done.getJsonArray("members").getJsonObject(0).getString("node"), master.getString("node"));
  }

  @Test
  void aFailedMemberStopsTheOthersAndTheGroupRestartsAsAUnit() throws Exception {
    Path marker = Files.createTempDirectory("group-restart").resolve("second-attempt");
    // first attempt: rank 1 fails after 2 s while rank 0 (which looked for the marker before) runs on; second
    // attempt: both find the marker and succeed
    String script = "if [ -e " + marker + " ]; then exit 0; fi; if [ $RANK = 1 ]; then sleep 2; touch " + marker
        + "; exit 3; fi; sleep 60";
    String id = group("restarts", "life", 2, script, ",\"restart_policy\":{\"max_restarts\":1}").getString("id");
    JsonObject done = awaitGroup(id, "succeeded", group -> "succeeded".equals(group.getString("status")));
    assertEquals(1, done.getInteger("restart_count"));
    JsonArray events = new JsonArray(cp.call("GET", "/api/v1/tasks/" + done.getJsonArray("members").getJsonObject(0)
        .getString("task_id") + "/events", ADMIN, null).body());
    assertTrue(events.encode().contains("created by restart 1"), events.encode());
    JsonObject tasks = cp.get("/api/v1/tasks?limit=1000");
    List<JsonObject> firstAttempt = tasks.getJsonArray("items").stream().map(JsonObject.class::cast)
        .filter(task -> id.equals(task.getString("group_id")) && task.getInteger("group_attempt") == 0)
        .sorted(java.util.Comparator.comparing(task -> task.getInteger("rank"))).toList();
    assertEquals(2, firstAttempt.size(), "the first attempt's members stay as history: " + firstAttempt);
    assertEquals("stopped", firstAttempt.get(0).getString("status"), "rank 0 got the graceful stop: " + firstAttempt);
    assertEquals("failed", firstAttempt.get(1).getString("status"), "rank 1 failed: " + firstAttempt);
    assertEquals(3, firstAttempt.get(1).getInteger("exit_code"));
    assertTrue(done.getJsonArray("members").stream().map(JsonObject.class::cast)
        .noneMatch(member -> firstAttempt.stream().anyMatch(old -> old.getString("id").equals(member.getString("task_id")))),
        "the restart runs fresh member tasks");
  }

  @Test
  void aPreemptedGroupGoesWholeAndComesBackAsAUnit() throws Exception {
    Path markers = Files.createTempDirectory("group-preempt");
    // each rank's first run waits to be preempted; once preempted and bound again, it finds its marker and ends
    String script = "if [ -e " + markers + "/$RANK ]; then exit 0; fi; touch " + markers + "/$RANK; sleep 60";
    String template = "{\"command\":[\"sh\",\"-c\",\"" + script + "\"],\"gpu_required\":2,\"priority\":10,"
        + "\"preemptible\":true,\"node_selector\":{\"pool\":\"pre\"}}";
    JsonObject created = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"cheap\",\"type\":\"job\","
        + "\"members\":{\"template\":" + template + ",\"count\":2}}", 201);
    String id = created.getString("id");
    awaitGroup(id, "running", group -> "running".equals(group.getString("status")));
    String urgent = cp.submit("{\"name\":\"urgent\",\"command\":[\"sleep\",\"2\"],\"gpu_required\":2,"
        + "\"priority\":90,\"node_selector\":{\"pool\":\"pre\"}}");
    cp.awaitStatus(urgent, "succeeded");
    JsonObject done = awaitGroup(id, "succeeded", group -> "succeeded".equals(group.getString("status")));
    assertEquals(0, done.getInteger("restart_count"), "a preemption uses no restart");
    for (int rank = 0; rank < 2; rank++) {
      String member = created.getJsonArray("members").getJsonObject(rank).getString("task_id");
      assertEquals(member, done.getJsonArray("members").getJsonObject(rank).getString("task_id"), "the same attempt");
      JsonObject task = cp.get("/api/v1/tasks/" + member);
      assertEquals(1, task.getInteger("preempt_count"), "every member was preempted, once: " + task.encode());
    }
    String events = cp.call("GET", "/api/v1/tasks/" + urgent + "/events", ADMIN, null).body();
    assertTrue(events.contains("member(s) elsewhere"), "the plan names the whole group: " + events);
  }

  @Test
  void stoppingAGroupStopsEveryMember() throws Exception {
    String id = group("stopped", "stop", 2, "sleep 60", "").getString("id");
    awaitGroup(id, "running", group -> "running".equals(group.getString("status")));
    JsonObject stopping = cp.json("POST", "/api/v1/groups/" + id + "/stop", ADMIN, null, 202);
    assertTrue(Set.of("stopping", "stopped").contains(stopping.getString("status")), stopping.encode());
    JsonObject stopped = awaitGroup(id, "stopped", group -> "stopped".equals(group.getString("status")));
    for (Object member : stopped.getJsonArray("members")) {
      assertEquals("stopped", ((JsonObject) member).getString("status"), stopped.encode());
    }
    assertEquals(409, cp.call("POST", "/api/v1/groups/" + id + "/stop", ADMIN, null).statusCode());
  }

  @Test
  void aGroupThatCannotBeCompletedWaitsWithCountsAndHoldsNothing() throws Exception {
    String id = group("too-big", "wait", 2, "true", "").getString("id");
    JsonObject waiting = awaitGroup(id, "GangIncomplete", group -> group.getJsonObject("reason") != null
        && "GangIncomplete".equals(group.getJsonObject("reason").getString("code")));
    assertEquals("pending", waiting.getString("status"));
    String message = waiting.getJsonObject("reason").getString("message");
    assertTrue(message.contains("needs 2 members with 2 free nvidia cards each"), message);
    assertTrue(message.contains("room for 1"), message);
    for (Object each : waiting.getJsonArray("members")) {
      JsonObject task = cp.get("/api/v1/tasks/" + ((JsonObject) each).getString("task_id"));
      assertEquals("pending", task.getString("status"));
      assertEquals("GangIncomplete", task.getJsonObject("reason").getString("code"), task.encode());
    }
    JsonObject node = cp.get("/api/v1/nodes/wait-1");
    assertEquals(0, node.getInteger("gpu_used"), "a waiting group holds no cards: " + node.encode());
    assertEquals(409, cp.call("POST", "/api/v1/tasks/" + waiting.getJsonArray("members").getJsonObject(0)
        .getString("task_id") + "/stop", ADMIN, null).statusCode(), "a member does not stop alone");
    cp.json("POST", "/api/v1/groups/" + id + "/stop", ADMIN, null, 202);
    JsonObject stopped = cp.get("/api/v1/groups/" + id);
    assertEquals("stopped", stopped.getString("status"));
    assertEquals("stopped", stopped.getJsonArray("members").getJsonObject(1).getString("status"));
  }
}
