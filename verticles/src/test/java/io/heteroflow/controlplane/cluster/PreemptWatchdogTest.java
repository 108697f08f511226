package io.heteroflow.controlplane.cluster;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The preempt watchdog forces a preemption its agent has not confirmed within 60 s through the same CAS as the
 * agent's report, so whichever of the two comes second changes nothing: tested in both orders, on PostgreSQL,
 * with the report sent on the bus as an agent sends it.
 */
class PreemptWatchdogTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static final PrometheusMeterRegistry REGISTRY = ControlPlane.newMeterRegistry();
  private static PreemptWatchdogVerticle watchdog;

  @BeforeAll
  static void deployWatchdog() throws Exception {
    // a period of an hour: only the test's own sweeps run
    watchdog = new PreemptWatchdogVerticle(cp.running.stores().tasks(), cp.running.leadership(),
        new ControlPlaneMetrics(REGISTRY), 3_600_000, PreemptWatchdogVerticle.TIMEOUT_SECONDS);
    await(cp.vertx.deployVerticle(watchdog));
  }

  private static void heartbeat(String node) throws Exception {
    JsonArray cards = new JsonArray();
    for (int i = 0; i < 4; i++) {
      cards.add(new JsonObject().put("index", i).put("model", "A100").put("memory_total_mb", 81920));
    }
    await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT, new JsonObject().put("node_id", node)
        .put("boot_id", "b").put("seq", System.nanoTime()).put("gpu_vendor", "nvidia").put("cpu_cores", 64)
        .put("memory_total_gb", 512.0).put("cards", cards).put("labels", new JsonObject().put("wd", node))));
  }

  /** A preemptible 4-card job running on {@code node}, moved running → preempting by the store's CAS; the node cordoned. */
  private static UUID preempting(String node, int secondsAgo) throws Exception {
    return preempting(node, secondsAgo, "");
  }

  /** The same, with more of the task's spec ({@code extra}: ",\"field\":value…"). */
  private static UUID preempting(String node, int secondsAgo, String extra) throws Exception {
    heartbeat(node);
    String id = cp.submit("{\"name\":\"victim\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":4,"
        + "\"preemptible\":true,\"priority\":10,\"node_selector\":{\"wd\":\"" + node + "\"}" + extra + "}");
    cp.awaitStatus(id, "scheduled");
    UUID task = UUID.fromString(id);
    TaskStore tasks = cp.running.stores().tasks();
    assertTrue(await(tasks.transition(task, TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)));
    assertTrue(await(tasks.transition(task, TaskStatus.RUNNING, TaskStatus.PREEMPTING, TaskStore.Details.NONE)));
    // cordoned, so the task back in the queue is not bound there again while the test looks at it
    cp.json("POST", "/api/v1/nodes/" + node + "/cordon", ControlPlaneHarness.ADMIN, null, 200);
    await(cp.pool().preparedQuery("UPDATE tasks SET preempting_since = now() - make_interval(secs => $2)"
        + " WHERE id = $1").execute(Tuple.of(task, (double) secondsAgo)));
    return task;
  }

  private static boolean report(UUID task, String node) throws Exception {
    return report(task, node, null);
  }

  /** The agent's report of the task's run {@code attempt} (null: as from an agent that never ran it). */
  private static boolean report(UUID task, String node, Integer attempt) throws Exception {
    JsonObject reply = (JsonObject) await(cp.vertx.eventBus().request(BusAddresses.TASK_REPORT, new JsonObject()
        .put("task_id", task.toString()).put("node_id", node).put("outcome", "stopped")
        .put("reason_code", "StoppedByUser").put("message", "stopped").put("attempt", attempt))).body();
    return reply.getBoolean("settled");
  }

  /** heteroflow_preemptions_total{result="forced_by_watchdog"} now (0 before the first). */
  private static double forced() {
    String series = "heteroflow_preemptions_total{result=\"forced_by_watchdog\"} ";
    return REGISTRY.scrape().lines().filter(line -> line.startsWith(series))
        .mapToDouble(line -> Double.parseDouble(line.substring(series.length()))).sum();
  }

  private static long count(String sql, Object... params) throws Exception {
    return await(cp.pool().preparedQuery(sql).execute(Tuple.from(params))).iterator().next().getLong(0);
  }

  /**
   * Back in the queue exactly once, by the one expected ({@code reason}: the agent's Preempted or the watchdog's
   * PreemptionForced): no node, its cards released once, counted as preempted once (its pending reason then is
   * the scheduler's: the node is cordoned).
   */
  private static void assertRequeuedOnce(UUID task, String node, String reason) throws Exception {
    JsonObject view = cp.get("/api/v1/tasks/" + task);
    assertEquals("pending", view.getString("status"));
    assertEquals(1, count("SELECT preempt_count FROM tasks WHERE id = $1", task));
    assertEquals(0, count("SELECT count(*) FROM tasks WHERE id = $1 AND preemptible", task), "never preempted again");
    assertEquals(0, count("SELECT count(*) FROM allocations WHERE task_id = $1 AND active", task));
    assertEquals(1, count("SELECT count(*) FROM gpu_ledger WHERE task_id = $1 AND entry = 'release'", task),
        "released once");
    assertEquals(1, count("SELECT count(*) FROM task_events WHERE task_id = $1 AND from_status = 'preempting'"
        + " AND to_status = 'pending'", task), "settled once");
    assertEquals(1, count("SELECT count(*) FROM task_events WHERE task_id = $1 AND to_status = 'pending'"
        + " AND code = $2", task, reason), "settled by the one expected: " + reason);
    assertEquals(0, count("SELECT gpu_used FROM nodes WHERE id = $1", node));
  }

  @Test
  void theWatchdogForcesAnUnconfirmedPreemptionAndTheLateConfirmationLosesItsCas() throws Exception {
    UUID task = preempting("wd-late", 61);
    double forcedBefore = forced();
    assertEquals(1, await(watchdog.sweep()));
    assertRequeuedOnce(task, "wd-late", "PreemptionForced");
    assertEquals(false, report(task, "wd-late"), "the thawed agent's confirmation is refused");
    assertRequeuedOnce(task, "wd-late", "PreemptionForced");
    assertEquals(1, forced() - forcedBefore, REGISTRY.scrape());
  }

  @Test
  void aConfirmedPreemptionIsNotForcedAgain() throws Exception {
    UUID task = preempting("wd-confirmed", 61);
    assertTrue(report(task, "wd-confirmed"));
    assertRequeuedOnce(task, "wd-confirmed", "Preempted");
    await(watchdog.sweep());
    assertRequeuedOnce(task, "wd-confirmed", "Preempted");
  }

  @Test
  void aPreemptionWithinItsSixtySecondsIsLeftToTheAgent() throws Exception {
    UUID task = preempting("wd-young", 30);
    await(watchdog.sweep());
    assertEquals("preempting", cp.get("/api/v1/tasks/" + task).getString("status"));
    assertTrue(report(task, "wd-young"));
  }

  @Test
  void anOperatorsShorterTimeoutForcesSoonerAndIsCheckedEveryHalfOfIt() throws Exception {
    assertEquals(PreemptWatchdogVerticle.PERIOD_MS, PreemptWatchdogVerticle.periodMs(
        PreemptWatchdogVerticle.TIMEOUT_SECONDS), "the defaults: 60 s, every 30 s");
    assertEquals(2000, PreemptWatchdogVerticle.periodMs(4));
    assertEquals(1000, PreemptWatchdogVerticle.periodMs(1), "at least a second");
    for (int bad : new int[] {0, -5, PreemptWatchdogVerticle.MAX_TIMEOUT_SECONDS + 1}) {
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
          () -> ControlPlane.Options.defaults(0, "t", null).withPreemptTimeoutSeconds(bad));
      assertTrue(refused.getMessage().contains("preempt timeout"), refused.getMessage());
    }
    assertEquals(PreemptWatchdogVerticle.TIMEOUT_SECONDS,
        ControlPlane.Options.defaults(0, "t", null).preemptTimeoutSeconds());
    PreemptWatchdogVerticle quick = new PreemptWatchdogVerticle(cp.running.stores().tasks(), cp.running.leadership(),
        new ControlPlaneMetrics(REGISTRY), 3_600_000, 5);
    String deployed = await(cp.vertx.deployVerticle(quick));
    try {
      // 30 s: overdue for this watchdog, not for the harness's own (60 s) one
      UUID overdue = preempting("wd-quick-old", 30);
      UUID young = preempting("wd-quick-young", 0);
      assertEquals(1, await(quick.sweep()));
      assertEquals("preempting", cp.get("/api/v1/tasks/" + young).getString("status"), "still within its 5 s");
      assertRequeuedOnce(overdue, "wd-quick-old", "PreemptionForced");
      assertTrue(report(young, "wd-quick-young"));
    } finally {
      await(cp.vertx.undeploy(deployed));
    }
  }

  @Test
  void aDeclaredCheckpointAndALongerGraceExtendTheSixtySeconds() throws Exception {
    // 60 s + the 120 s checkpoint + the 40 s of grace above the default 10 s = 220 s
    String spec = ",\"checkpoint\":{\"signal\":\"SIGUSR1\",\"timeout_seconds\":120},\"termination_grace_seconds\":50";
    UUID inTime = preempting("wd-ckpt-young", 210, spec);
    UUID overdue = preempting("wd-ckpt-old", 225, spec);
    await(watchdog.sweep());
    assertEquals("preempting", cp.get("/api/v1/tasks/" + inTime).getString("status"), "still within its 220 s");
    assertRequeuedOnce(overdue, "wd-ckpt-old", "PreemptionForced");
    assertTrue(report(inTime, "wd-ckpt-young"));
  }

  @Test
  void aLateReportOfTheRunBeforeAForcedPreemptionSettlesNothingOnceTheTaskRunsAgainThere() throws Exception {
    UUID task = preempting("wd-again", 61);
    assertEquals(1, await(watchdog.sweep()));
    cp.json("POST", "/api/v1/nodes/wd-again/uncordon", ControlPlaneHarness.ADMIN, null, 200);
    cp.awaitStatus(task.toString(), "scheduled");
    TaskStore tasks = cp.running.stores().tasks();
    assertTrue(await(tasks.transition(task, TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)));
    assertEquals(false, report(task, "wd-again", 0), "the frozen agent's report of the first run (attempt 0)");
    assertEquals("running", cp.get("/api/v1/tasks/" + task).getString("status"));
    assertTrue(report(task, "wd-again", 1), "the report of this run (attempt 1) settles it");
  }

  @Test
  void theThawedAgentIsToldToStopTheTaskTheWatchdogSettled() throws Exception {
    UUID task = preempting("wd-thawed", 61);
    assertEquals(1, await(watchdog.sweep()));
    JsonArray cards = new JsonArray();
    for (int i = 0; i < 4; i++) {
      cards.add(new JsonObject().put("index", i).put("model", "A100").put("memory_total_mb", 81920));
    }
    JsonObject reply = (JsonObject) await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT, new JsonObject()
        .put("node_id", "wd-thawed").put("boot_id", "b").put("seq", System.nanoTime()).put("gpu_vendor", "nvidia")
        .put("cpu_cores", 64).put("memory_total_gb", 512.0).put("cards", cards)
        .put("labels", new JsonObject().put("wd", "wd-thawed"))
        .put("active_tasks", new JsonArray().add(task.toString())))).body();
    assertEquals(new JsonArray().add(task.toString()), reply.getJsonArray("stop"),
        "its process still runs on cards the control plane gave back: " + reply);
    assertEquals(false, report(task, "wd-thawed", 0), "and its confirmation, when it comes, settles nothing");
  }
}
