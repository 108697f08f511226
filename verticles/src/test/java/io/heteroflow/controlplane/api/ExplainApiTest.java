package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.controlplane.scheduler.plan.ReservationPlanner;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code POST /api/v1/tasks/explain} end to end (SPEC §13) on two simulated nodes of 4 A100 each: where a task or a
 * group would run now, the reason a pending task would show, the queue it resolves to with its quota's verdict, how
 * much waits ahead of it, when it could start — and nothing written to PostgreSQL.
 */
class ExplainApiTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final String EXPLAIN = "/api/v1/tasks/explain";
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(node("ex-1"), node("ex-2")));
  private static String carol;
  private static String dave;

  private static SimulatedNode node(String id) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", 4, 81920, 16, 128, 5, 4096, List.of(), List.of(),
        Map.of(), Map.of(), List.of("127.0.0.1"), null);
  }

  @BeforeAll
  static void start() throws Exception {
    eventually(Duration.ofSeconds(60), "two agents", () -> cp.get("/api/v1/nodes").getInteger("count") == 2);
    carol = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"carol\"}", 201).getString("token");
    dave = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"dave\"}", 201).getString("token");
  }

  private static long count(String table) throws Exception {
    return ControlPlaneHarness.await(cp.pool().query("SELECT count(*) FROM " + table).execute()).iterator().next()
        .getLong(0);
  }

  private static JsonObject explain(String token, String body) throws Exception {
    return cp.json("POST", EXPLAIN, token, body, 200);
  }

  private static void assertField(String token, String body, String field) throws Exception {
    HttpResponse<String> response = cp.call("POST", EXPLAIN, token, body);
    assertEquals(400, response.statusCode(), response.body());
    assertEquals(field, new JsonObject(response.body()).getString("field"), response.body());
  }

  @Test
  void aTaskThatFitsIsPlacedOnARealNodeAndNothingIsCreated() throws Exception {
    long tasks = count("tasks");
    long groups = count("task_groups");
    JsonObject answer = explain(ADMIN, "{\"name\":\"fits\",\"command\":[\"true\"],\"gpu_required\":2,"
        + "\"gpu_type\":\"nvidia\"}");
    assertEquals("task", answer.getString("kind"));
    JsonObject placement = answer.getJsonObject("placement");
    assertNotNull(placement, answer.encode());
    assertTrue(Set.of("ex-1", "ex-2").contains(placement.getString("node")), answer.encode());
    assertEquals(2, placement.getJsonArray("gpus").size(), answer.encode());
    assertNull(answer.getValue("reason"), answer.encode());
    assertEquals(2, answer.getJsonObject("snapshot").getInteger("nodes"));
    Instant eta = Instant.parse(answer.getString("estimated_start_at"));
    assertTrue(Duration.between(eta, Instant.now()).abs().toSeconds() < 30, "placed: it could start now, " + eta);
    assertEquals("root", answer.getJsonObject("queue").getString("name"), "the admin's default queue");
    assertEquals(false, answer.getJsonObject("queue").getJsonObject("quota").getBoolean("blocks"));
    assertEquals(tasks, count("tasks"), "explaining creates no task");
    assertEquals(groups, count("task_groups"), "explaining creates no group");
  }

  @Test
  void aTaskThatFitsNowhereGetsTheReasonAPendingTaskShows() throws Exception {
    String spec = "{\"name\":\"huge\",\"command\":[\"true\"],\"gpu_required\":8}";
    JsonObject answer = explain(ADMIN, spec);
    assertNull(answer.getValue("placement"), answer.encode());
    JsonObject reason = answer.getJsonObject("reason");
    assertEquals("InsufficientResources", reason.getString("code"), answer.encode());
    assertEquals("0/2 nodes are available: 2 fewer than 8 free cards.", reason.getString("message"));
    assertNull(answer.getValue("estimated_start_at"), "no node has 8 cards: " + answer.encode());
    assertEquals(ReservationPlanner.UNKNOWN, answer.getString("estimate_note"));
    // the same words the scheduler writes on the task once it is submitted
    String id = cp.submit(spec);
    JsonObject pending = cp.awaitReason(id, "InsufficientResources");
    assertEquals(reason.getString("message"), pending.getJsonObject("reason").getString("message"));
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
    JsonObject vendor = explain(ADMIN, "{\"name\":\"npu\",\"command\":[\"true\"],\"gpu_required\":1,"
        + "\"gpu_type\":\"ascend\"}");
    assertEquals("GPUTypeUnavailable", vendor.getJsonObject("reason").getString("code"), vendor.encode());
    assertEquals("cannot be known: no node could take it as the fleet is (GPUTypeUnavailable)",
        vendor.getString("estimate_note"));
  }

  @Test
  void whileTheCardsAreBusyTheEstimateIsWhenTheRunningTasksEndAndASmallTaskBackfills() throws Exception {
    String one = cp.submit("{\"name\":\"busy-1\",\"command\":[\"sleep\",\"120\"],\"gpu_required\":3,"
        + "\"expected_runtime_seconds\":300}");
    String two = cp.submit("{\"name\":\"busy-2\",\"command\":[\"sleep\",\"120\"],\"gpu_required\":4,"
        + "\"expected_runtime_seconds\":600}");
    String big = null;
    try {
      cp.awaitStatus(one, "running");
      cp.awaitStatus(two, "running");
      String spec = "{\"name\":\"later\",\"command\":[\"true\"],\"gpu_required\":4}";
      JsonObject answer = explain(ADMIN, spec);
      assertEquals("InsufficientResources", answer.getJsonObject("reason").getString("code"), answer.encode());
      long in = Duration.between(Instant.now(), Instant.parse(answer.getString("estimated_start_at"))).toSeconds();
      assertTrue(in > 250 && in <= 300, "when busy-1 ends (300 s after it started): " + in + " s");
      assertNull(answer.getValue("estimate_note"));
      // submitted for real it waits with a reservation on busy-1's node; a short task of one card starts there
      String waiting = cp.submit(spec);
      big = waiting;
      eventually(Duration.ofSeconds(20), "the waiting task's estimate",
          () -> cp.get("/api/v1/tasks/" + waiting).getString("estimated_start_at") != null);
      // it may start there because its timeout ends it before the reservation starts
      JsonObject small = cp.run("{\"name\":\"short\",\"command\":[\"true\"],\"gpu_required\":1,"
          + "\"timeout_seconds\":30}");
      assertEquals(cp.get("/api/v1/tasks/" + one).getString("node"), small.getString("node"), small.encode());
      String metrics = cp.call("GET", "/metrics", null, null).body();
      assertTrue(metrics.contains("heteroflow_backfilled_tasks_total{queue=\"root\"} 1.0"), "backfilled once");
      eventually(Duration.ofSeconds(15), "the queue's running and pending gauges", () -> {
        try {
          String now = cp.call("GET", "/metrics", null, null).body();
          return now.contains("heteroflow_queue{measure=\"running\",queue=\"root\"} 2.0")
              && now.contains("heteroflow_queue{measure=\"pending\",queue=\"root\"} 1.0");
        } catch (Exception e) {
          return false;
        }
      });
    } finally {
      if (big != null) {
        cp.json("POST", "/api/v1/tasks/" + big + "/stop", ADMIN, null, 202);
      }
      cp.json("POST", "/api/v1/tasks/" + one + "/stop", ADMIN, null, 202);
      cp.json("POST", "/api/v1/tasks/" + two + "/stop", ADMIN, null, 202);
      cp.awaitStatus(one, "stopped");
      cp.awaitStatus(two, "stopped");
    }
  }

  @Test
  void badInputIsA400NamingTheFieldAsOnSubmission() throws Exception {
    assertField(ADMIN, "{\"name\":\"x\",\"command\":[\"true\"],\"require_nvlink\":true}", "require_nvlink");
    assertField(ADMIN, "{\"name\":\"x\",\"command\":[\"true\"],\"gpu_required\":-1}", "gpu_required");
    assertField(ADMIN, "{\"name\":\"x\",\"command\":[\"true\"],\"queue\":\"nowhere\"}", "queue");
    assertField(ADMIN, "{\"name\":\"g\",\"members\":[{\"name\":\"a\",\"command\":[\"true\"]},{\"name\":\"b\","
        + "\"command\":[\"true\"],\"gpu_required\":\"two\"}]}", "members[1].gpu_required");
    assertEquals(401, cp.call("POST", EXPLAIN, null, "{\"name\":\"x\",\"command\":[\"true\"]}").statusCode());
  }

  @Test
  void aTenantExplainsAsItselfInItsQueueWithTheQuotasWords() throws Exception {
    cp.json("PUT", "/api/v1/gpu-equivalents", ADMIN, "{\"A100-SXM4-80GB\":0.5}", 200);
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"ex-q\",\"guaranteed\":1,\"max\":1.0,"
        + "\"tenants\":[\"carol\"]}", 201);
    String waiting = cp.json("POST", "/api/v1/tasks", carol, "{\"name\":\"over\",\"command\":[\"true\"],"
        + "\"gpu_required\":3}", 201).getString("id");
    try {
      JsonObject small = explain(carol, "{\"name\":\"small\",\"command\":[\"true\"],\"gpu_required\":1}");
      JsonObject queue = small.getJsonObject("queue");
      assertEquals("ex-q", queue.getString("name"), "carol's default queue: " + small.encode());
      assertEquals(1.0, queue.getDouble("max"));
      assertEquals(1.0, queue.getDouble("guaranteed"));
      assertEquals(0.0, queue.getJsonObject("usage").getDouble("gpu_eq"));
      assertEquals(false, queue.getJsonObject("quota").getBoolean("blocks"), small.encode());
      assertNotNull(small.getJsonObject("placement"), small.encode());
      assertEquals(1, small.getJsonObject("queue_position").getLong("ahead"), "carol's waiting task: " + small);
      JsonObject urgent = explain(carol, "{\"name\":\"urgent\",\"command\":[\"true\"],\"priority\":90}");
      assertEquals(0, urgent.getJsonObject("queue_position").getLong("ahead"), urgent.encode());

      JsonObject big = explain(carol, "{\"name\":\"big\",\"command\":[\"true\"],\"gpu_required\":3}");
      String words = "queue root/ex-q uses 0.0 of 1.0 GPU-eq; this task needs 1.5";
      assertEquals(true, big.getJsonObject("queue").getJsonObject("quota").getBoolean("blocks"), big.encode());
      assertEquals(words, big.getJsonObject("queue").getJsonObject("quota").getString("message"));
      assertEquals("QuotaExceeded", big.getJsonObject("reason").getString("code"));
      assertEquals(words, cp.awaitReason(waiting, "QuotaExceeded").getJsonObject("reason").getString("message"),
          "the scheduler's own words for the same task");
      assertNull(big.getValue("placement"));
      assertEquals("cannot be known: it waits for its queue's quota, not for capacity", big.getString("estimate_note"));

      assertField(dave, "{\"name\":\"x\",\"command\":[\"true\"],\"queue\":\"ex-q\"}", "queue");
      assertField(carol, "{\"name\":\"x\",\"command\":[\"true\"],\"queue\":\"root\"}", "queue");
      assertEquals("root", explain(dave, "{\"name\":\"x\",\"command\":[\"true\"]}").getJsonObject("queue")
          .getString("name"), "a tenant no queue lists goes to root");
    } finally {
      cp.json("POST", "/api/v1/tasks/" + waiting + "/stop", ADMIN, null, 202);
      // the queue stays (PostgreSQL keeps its ended tasks' rows pointing at it); later tests use root
      cp.json("PUT", "/api/v1/gpu-equivalents", ADMIN, "{}", 200);
    }
  }

  @Test
  void aGroupIsPlacedAllOrNothingAndNothingIsCreated() throws Exception {
    long groups = count("task_groups");
    long tasks = count("tasks");
    JsonObject pair = explain(ADMIN, "{\"name\":\"ddp\",\"members\":{\"template\":{\"command\":[\"true\"],"
        + "\"gpu_required\":4,\"gpu_type\":\"nvidia\"},\"count\":2}}");
    assertEquals("group", pair.getString("kind"));
    JsonArray members = pair.getJsonObject("placement").getJsonArray("members");
    assertEquals(2, members.size(), pair.encode());
    assertEquals(Set.of("ex-1", "ex-2"), Set.of(members.getJsonObject(0).getString("node"),
        members.getJsonObject(1).getString("node")), "one whole node per member: " + pair.encode());
    assertEquals(Set.of(0, 1), Set.of(members.getJsonObject(0).getInteger("rank"),
        members.getJsonObject(1).getInteger("rank")));
    JsonObject three = explain(ADMIN, "{\"name\":\"ddp3\",\"members\":{\"template\":{\"command\":[\"true\"],"
        + "\"gpu_required\":4,\"gpu_type\":\"nvidia\"},\"count\":3}}");
    assertNull(three.getValue("placement"), three.encode());
    assertEquals("GangIncomplete", three.getJsonObject("reason").getString("code"));
    assertTrue(three.getJsonObject("reason").getString("message").startsWith("the group of 3 cannot be completed"),
        three.encode());
    assertEquals(groups, count("task_groups"), "explaining creates no group");
    assertEquals(tasks, count("tasks"), "nor its members");
  }
}
