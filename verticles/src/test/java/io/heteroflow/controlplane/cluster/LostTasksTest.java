package io.heteroflow.controlplane.cluster;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Running tasks whose process is gone hold no cards: on a node offline past the grace (NodeLost, the recovery
 * beat), absent from two heartbeats in a row of the node's restarted agent (AgentRestarted), or of its own agent
 * (NotRunningOnAgent: the agent does not run it). The test is
 * the agent: it sends the heartbeats and claims on the bus of a real control plane on PostgreSQL.
 */
class LostTasksTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();


  /** A heartbeat of an 8-card node labelled lost=node, reporting {@code active} as its running tasks. */
  private static JsonObject beat(String node, String boot, long seq, String... active) throws Exception {
    JsonArray cards = new JsonArray();
    for (int i = 0; i < 8; i++) {
      cards.add(new JsonObject().put("index", i).put("model", "A100").put("memory_total_mb", 81920));
    }
    JsonObject heartbeat = new JsonObject().put("node_id", node).put("boot_id", boot).put("seq", seq)
        .put("gpu_vendor", "nvidia").put("cpu_cores", 64).put("memory_total_gb", 512.0).put("cards", cards)
        .put("labels", new JsonObject().put("lost", node)).put("active_tasks", new JsonArray(List.of(active)));
    return (JsonObject) await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT, heartbeat)).body();
  }

  /** The node's agent process died: silent past the hold window, so a new boot's heartbeat takes the node over. */
  private static void died(String node) throws Exception {
    await(cp.pool().preparedQuery("UPDATE nodes SET last_heartbeat_at = now() - interval '10 seconds' WHERE id = $1")
        .execute(Tuple.of(node)));
  }

  private static String submit(String node, int cards) throws Exception {
    return cp.submit("{\"name\":\"long\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":" + cards
        + ",\"node_selector\":{\"lost\":\"" + node + "\"}}");
  }

  /** A task bound to {@code node} and claimed scheduled → running, as its agent would. */
  private static String running(String node, int cards) throws Exception {
    String id = submit(node, cards);
    cp.awaitStatus(id, "scheduled");
    JsonObject claim = new JsonObject().put("task_id", id).put("node_id", node);
    assertEquals(true, ((JsonObject) await(cp.vertx.eventBus().request(BusAddresses.TASK_CLAIM, claim)).body())
        .getBoolean("claimed"));
    return id;
  }

  private static String status(String id) {
    return cp.get("/api/v1/tasks/" + id).getString("status");
  }

  private static long count(String sql, Object... params) throws Exception {
    return await(cp.pool().preparedQuery(sql).execute(Tuple.from(params))).iterator().next().getLong(0);
  }

  private static String rows(String sql, Object... params) {
    try {
      StringBuilder text = new StringBuilder();
      await(cp.pool().preparedQuery(sql).execute(Tuple.from(params))).forEach(row -> text.append(row.toJson()));
      return text.toString();
    } catch (Exception e) {
      return e.toString();
    }
  }

  /** Failed with {@code reason}, its cards released with a ledger entry and an event; a new 8-card task binds. */
  private static void assertSettled(String id, String node, String reason) throws Exception {
    JsonObject task = cp.get("/api/v1/tasks/" + id);
    assertEquals("failed", task.getString("status"), () -> "task and node: " + rows("SELECT t.status, t.agent_misses,"
        + " t.started_at, n.boot_seen_at, n.boot_id, n.heartbeat_seq FROM tasks t JOIN nodes n ON n.id = t.node_id"
        + " WHERE t.id = $1", UUID.fromString(id)));
    assertEquals(reason, task.getJsonObject("reason").getString("code"));
    UUID taskId = UUID.fromString(id);
    assertEquals(0, count("SELECT count(*) FROM allocations WHERE task_id = $1 AND active", taskId));
    assertEquals(1, count("SELECT count(*) FROM gpu_ledger WHERE task_id = $1 AND delta = -8 AND entry = 'release'",
        taskId), "the release is in the GPU ledger");
    assertEquals(1, count("SELECT count(*) FROM task_events WHERE task_id = $1 AND from_status = 'running'"
        + " AND to_status = 'failed' AND code = $2", taskId, reason));
    assertEquals(0, count("SELECT gpu_used FROM nodes WHERE id = $1", node));
    String next = submit(node, 8);
    cp.awaitStatus(next, "scheduled");
  }

  @Test
  void aRunningTaskTheRestartedAgentDoesNotReportTwiceInARowFailsAsAgentRestarted() throws Exception {
    String node = "lost-restart";
    beat(node, "boot-1", 1);
    String id = running(node, 8);
    beat(node, "boot-1", 2, id);
    died(node);
    beat(node, "boot-2", 1);
    assertEquals("running", status(id), "one heartbeat without it: it may have been claimed as that one was built");
    beat(node, "boot-2", 2, id);
    beat(node, "boot-2", 3);
    assertEquals("running", status(id), "the count restarts when the new agent reports it");
    beat(node, "boot-2", 4);
    assertSettled(id, node, "AgentRestarted");
  }

  @Test
  void tasksTheAgentReportsAreNeverCounted() throws Exception {
    String node = "lost-keep";
    beat(node, "boot-1", 1);
    String before = running(node, 4);
    beat(node, "boot-1", 2, before);
    beat(node, "boot-1", 3, before);
    assertEquals("running", status(before), "reported by its agent");
    died(node);
    beat(node, "boot-2", 1, before);
    String after = running(node, 4);
    beat(node, "boot-2", 2, before, after);
    beat(node, "boot-2", 3, before, after);
    assertEquals("running", status(after), "claimed and reported by the new boot");
    assertEquals("running", status(before), "reported by the new agent");
  }

  @Test
  void aRunningTaskItsOwnAgentDoesNotReportTwiceInARowFailsAsNotRunningOnAgent() throws Exception {
    String node = "lost-forgotten";
    beat(node, "boot-1", 1);
    String id = running(node, 8); // claimed, but the agent never started it (it gave up the claim, say)
    beat(node, "boot-1", 2);
    assertEquals("running", status(id), "one heartbeat without it: it may have been built before the claim");
    beat(node, "boot-1", 3, id);
    beat(node, "boot-1", 4);
    assertEquals("running", status(id), "the count restarts when the agent reports it");
    beat(node, "boot-1", 5);
    assertSettled(id, node, "NotRunningOnAgent");
  }

  @Test
  void aRunningTaskOnANodeOfflinePastTheGraceFailsAsNodeLost() throws Exception {
    String node = "lost-offline";
    beat(node, "boot-1", 1);
    String id = running(node, 8);
    await(cp.pool().preparedQuery("UPDATE nodes SET status = 'offline', last_heartbeat_at = now() - interval"
        + " '10 minutes' WHERE id = $1").execute(Tuple.of(node)));
    RecoveryVerticle recovery = new RecoveryVerticle(cp.running.stores().tasks(), cp.running.leadership(), 3_600_000, 60);
    await(cp.vertx.deployVerticle(recovery));
    assertEquals(1, (int) await(recovery.recover()));
    beat(node, "boot-1", 2); // back online: its cards are free again
    assertSettled(id, node, "NodeLost");
  }
}
