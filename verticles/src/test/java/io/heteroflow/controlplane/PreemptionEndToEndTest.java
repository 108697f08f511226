package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Preemption end to end in one JVM (SPEC §6): control plane on real PostgreSQL, simulated agents on the event bus
 * running real processes. Each test has its own pool of nodes (label {@code pool}), so they do not share victims.
 */
class PreemptionEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final Duration WAIT = Duration.ofSeconds(60);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      node("fleet-1", "fleet"), node("fleet-2", "fleet"), node("hold-1", "hold"), node("train-1", "train")));

  private static SimulatedNode node(String id, String pool) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", 2, 81920, 16, 128, 5, 4096, List.of(), List.of(),
        Map.of("pool", pool), Map.of(), List.of("127.0.0.1"), null);
  }

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "four agents registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 4);
  }

  private static String job(String name, String pool, int priority, boolean preemptible, int cards, String script,
                            String extra) throws Exception {
    return cp.submit("{\"name\":\"" + name + "\",\"command\":[\"sh\",\"-c\",\"" + script + "\"],\"gpu_required\":"
        + cards + ",\"priority\":" + priority + ",\"preemptible\":" + preemptible + ",\"node_selector\":{\"pool\":\""
        + pool + "\"}" + extra + "}");
  }

  private static JsonObject task(String id) {
    return cp.get("/api/v1/tasks/" + id);
  }

  private static List<JsonObject> events(String id) {
    JsonArray events;
    try {
      events = new JsonArray(cp.call("GET", "/api/v1/tasks/" + id + "/events", ADMIN, null).body());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    List<JsonObject> all = new ArrayList<>();
    events.forEach(event -> all.add((JsonObject) event));
    return all;
  }

  @Test
  void aFullFleetMakesRoomForEveryPreemptorAndEveryVictimRunsAgain() throws Exception {
    double plannedBefore = metric("heteroflow_preemptions_total{result=\"planned\"}");
    double victimsBefore = metric("heteroflow_preemption_victims_total");
    List<String> victims = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      victims.add(job("victim-" + i, "fleet", 10 + i, true, 1, "sleep 6", ""));
    }
    for (String victim : victims) {
      cp.awaitStatus(victim, "running");
    }
    String first = job("urgent-a", "fleet", 90, false, 2, "sleep 1", "");
    String second = job("urgent-b", "fleet", 90, false, 2, "sleep 1", "");
    JsonObject a = awaitStatus(first, "succeeded");
    JsonObject b = awaitStatus(second, "succeeded");
    assertTrue(!a.getString("node").equals(b.getString("node")), "one node each: " + a + " " + b);
    for (String victim : victims) {
      JsonObject done = awaitStatus(victim, "succeeded");
      assertEquals(1, done.getInteger("preempt_count"), done.encode());
      assertFalse(done.getBoolean("preemptible"), "a preempted task is never preempted again");
      JsonObject preempted = events(victim).stream().filter(e -> "preempting".equals(e.getString("to")))
          .findFirst().orElseThrow(() -> new AssertionError("no preempting transition: " + events(victim)));
      assertTrue(preempted.getString("message").startsWith("preempted by task "), preempted.encode());
      assertTrue(preempted.getString("message").contains("they free"), "the plan: " + preempted.encode());
      assertTrue(events(victim).stream().anyMatch(e -> "Preempted".equals(e.getString("code"))
          && "pending".equals(e.getString("to"))), "settled back to pending on the agent's confirmation");
    }
    for (String preemptor : List.of(first, second)) {
      JsonObject pending = events(preemptor).stream().filter(e -> "PreemptionPending".equals(e.getString("code")))
          .findFirst().orElseThrow(() -> new AssertionError("no PreemptionPending: " + events(preemptor)));
      long named = victims.stream().filter(pending.getString("message")::contains).count();
      assertEquals(2, named, "the preemptor's record names its two victims (the minimal set): " + pending);
      assertEquals(1, events(preemptor).stream().filter(e -> "preemption".equals(e.getString("kind"))).count(),
          "planned once: " + events(preemptor));
    }
    assertNoCardHeldTwice("fleet-");
    assertEquals(2, metric("heteroflow_preemptions_total{result=\"planned\"}") - plannedBefore);
    assertEquals(4, metric("heteroflow_preemption_victims_total") - victimsBefore);
    assertTrue(metric("heteroflow_preemption_duration_seconds_count") >= 4, "every settlement timed");
  }

  @Test
  void aNominatedNodeIsHeldAgainstLowerPrioritiesUntilItsVictimIsKilledAfterItsGrace() throws Exception {
    // the victim ignores SIGTERM (an ignored signal stays ignored across exec): killed only after its 4 s grace
    String stubborn = job("stubborn", "hold", 10, true, 2, "trap '' TERM; sleep 60",
        ",\"termination_grace_seconds\":4");
    cp.awaitStatus(stubborn, "running");
    String urgent = job("urgent", "hold", 90, false, 2, "sleep 1", "");
    JsonObject nominated = cp.awaitReason(urgent, "PreemptionPending");
    assertEquals("hold-1", nominated.getString("nominated_node"), nominated.encode());
    assertTrue(nominated.getString("nominated_until") != null, nominated.encode());
    JsonObject victim = task(stubborn);
    assertEquals("preempting", victim.getString("status"), "its stop waits out the grace");
    assertTrue(victim.getString("preempting_since") != null, victim.encode());
    String lower = job("lower", "hold", 50, false, 1, "true", "");
    JsonObject ran = awaitStatus(urgent, "succeeded");
    assertEquals("hold-1", ran.getString("node"));
    assertNull(ran.getString("nominated_node"), "a bind clears the nomination");
    OffsetDateTime preempting = at(stubborn, "preempting");
    OffsetDateTime settled = at(stubborn, "pending");
    assertTrue(Duration.between(preempting, settled).toMillis() >= 3500,
        "SIGKILL only after the 4 s grace: " + preempting + " → " + settled);
    JsonObject lowerRun = awaitStatus(lower, "succeeded");
    assertTrue(OffsetDateTime.parse(lowerRun.getString("scheduled_at"))
        .isAfter(OffsetDateTime.parse(ran.getString("scheduled_at"))), "the lower task bound only after the preemptor");
    cp.call("POST", "/api/v1/tasks/" + stubborn + "/stop", ADMIN, null);
    assertNoCardHeldTwice("hold-");
  }

  @Test
  void trainingNeverPreemptsAndNothingPreemptsWhereVictimsCannotSuffice() throws Exception {
    String victim = job("small", "train", 10, true, 1, "sleep 60", "");
    String kept = job("kept", "train", 10, false, 1, "sleep 60", "");
    cp.awaitStatus(victim, "running");
    cp.awaitStatus(kept, "running");
    String training = cp.submit("{\"name\":\"trainer\",\"type\":\"training\",\"command\":[\"true\"],"
        + "\"gpu_required\":1,\"priority\":90,\"node_selector\":{\"pool\":\"train\"}}");
    String tooBig = job("too-big", "train", 90, false, 2, "true", "");
    JsonObject big = cp.awaitReason(tooBig, "InsufficientResources");
    eventually(WAIT, "the too-big task told preemption cannot help", () -> task(tooBig).getJsonObject("reason")
        .getString("message").contains("Preemption cannot help"));
    JsonObject trainer = cp.awaitReason(training, "InsufficientResources");
    Thread.sleep(2000); // a few rounds: neither may have planned anything
    assertEquals("running", task(victim).getString("status"), "the training task never preempts: " + trainer);
    assertEquals("pending", task(tooBig).getString("status"), big.encode());
    assertTrue(events(tooBig).stream().noneMatch(e -> "preemption".equals(e.getString("kind"))));
    assertEquals(400, cp.call("POST", "/api/v1/tasks", ADMIN, "{\"name\":\"t\",\"type\":\"training\","
        + "\"command\":[\"true\"],\"preemptible\":true}").statusCode(), "training is never preemptible");
    for (String id : List.of(victim, kept, training, tooBig)) {
      cp.call("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null);
    }
  }

  /** A series' value on /metrics (0 when absent). */
  private static double metric(String series) throws Exception {
    for (String line : cp.call("GET", "/metrics", null, null).body().split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    return 0;
  }

  private static JsonObject awaitStatus(String id, String status) throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(WAIT, "task " + id + " " + status, () -> status.equals((last[0] = task(id)).getString("status")));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0] + "; events " + events(id), e);
    }
    return last[0];
  }

  private static OffsetDateTime at(String id, String to) {
    return events(id).stream().filter(e -> to.equals(e.getString("to"))).map(e -> OffsetDateTime.parse(e.getString("at")))
        .reduce((x, y) -> y).orElseThrow();
  }

  /** The allocation history of these nodes: no two allocations of one card overlap in time. */
  private static void assertNoCardHeldTwice(String nodePrefix) throws Exception {
    List<Row> rows = new ArrayList<>();
    await(cp.pool().preparedQuery("SELECT node_id, gpu_index, task_id, allocated_at, released_at FROM allocations"
        + " WHERE node_id LIKE $1 AND kind = 'whole' ORDER BY node_id, gpu_index, allocated_at")
        .execute(Tuple.of(nodePrefix + "%"))).forEach(rows::add);
    assertTrue(rows.size() > 0);
    Map<String, List<Row>> byCard = rows.stream().collect(Collectors.groupingBy(
        row -> row.getString("node_id") + "/" + row.getInteger("gpu_index")));
    byCard.forEach((card, held) -> {
      for (int i = 1; i < held.size(); i++) {
        OffsetDateTime released = held.get(i - 1).getOffsetDateTime("released_at");
        assertTrue(released != null && !released.isAfter(held.get(i).getOffsetDateTime("allocated_at")),
            "card " + card + " held by " + held.get(i - 1).getUUID("task_id") + " and " + held.get(i).getUUID("task_id"));
      }
    });
  }
}
