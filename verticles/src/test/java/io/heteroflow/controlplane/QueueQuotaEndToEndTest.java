package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Queues and quotas end to end (SPEC §13): the API's rules for the tree, who may submit where, and a queue's max in
 * GPU-equivalents enforced while real processes run: a task beyond it waits with QuotaExceeded and the numbers,
 * and starts once room returns; PostgreSQL never shows the queue over its max.
 */
class QueueQuotaEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(node("q-1"), node("q-2")));
  private static String alice;
  private static String bob;

  private static SimulatedNode node(String id) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", 4, 81920, 16, 128, 5, 4096, List.of(), List.of(),
        Map.of(), Map.of(), List.of("127.0.0.1"), null);
  }

  @BeforeAll
  static void start() throws Exception {
    eventually(Duration.ofSeconds(60), "two agents", () -> cp.get("/api/v1/nodes").getInteger("count") == 2);
    alice = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
  }

  private static void assertField(HttpResponse<String> response, int status, String field) {
    assertEquals(status, response.statusCode(), response.body());
    assertEquals(field, new JsonObject(response.body()).getString("field"), response.body());
  }

  @Test
  void theTreeIsValidatedNamingTheFieldAndOnlyEmptyQueuesGo() throws Exception {
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab\",\"guaranteed\":4,\"max\":8,\"tenants\":[\"bob\"]}", 201);
    assertField(cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-a\",\"parent\":\"lab\",\"guaranteed\":5,"
        + "\"max\":8}"), 400, "guaranteed");
    assertField(cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-b\",\"parent\":\"lab\",\"max\":9}"), 400,
        "max");
    assertField(cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-c\",\"parent\":\"nowhere\"}"), 400,
        "parent");
    assertField(cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-d\",\"guaranteed\":3,\"max\":2}"), 400,
        "max");
    assertField(cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-e\",\"caps\":{\"max_cards\":2}}"), 400,
        "caps.max_cards");
    assertEquals(409, cp.call("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab\"}").statusCode());
    assertEquals(403, cp.call("POST", "/api/v1/queues", bob, "{\"name\":\"mine\"}").statusCode());
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"lab-f\",\"parent\":\"lab\",\"guaranteed\":4,\"max\":8,"
        + "\"tenants\":[\"bob\"],\"caps\":{\"max_cards_per_task\":2}}", 201);
    assertField(cp.call("PUT", "/api/v1/queues/lab", ADMIN, "{\"parent\":\"lab-f\"}"), 400, "parent");
    assertField(cp.call("POST", "/api/v1/tasks", bob, "{\"name\":\"t\",\"command\":[\"true\"],\"gpu_required\":3,"
        + "\"queue\":\"lab-f\"}"), 400, "gpu_required");
    assertField(cp.call("POST", "/api/v1/tasks", bob, "{\"name\":\"t\",\"command\":[\"true\"],\"queue\":\"nope\"}"),
        400, "queue");
    assertField(cp.call("POST", "/api/v1/tasks", bob, "{\"name\":\"t\",\"command\":[\"true\"],\"queue\":\"root\"}"),
        400, "queue");
    JsonObject task = cp.json("POST", "/api/v1/tasks", bob, "{\"name\":\"t\",\"command\":[\"sleep\",\"30\"]}", 201);
    assertEquals("lab", task.getString("queue"), "bob's default: the first queue that lists him");
    assertEquals(409, cp.call("DELETE", "/api/v1/queues/lab", ADMIN, null).statusCode(), "not empty");
    assertEquals(409, cp.call("DELETE", "/api/v1/queues/root", ADMIN, null).statusCode());
    cp.json("DELETE", "/api/v1/queues/lab-f", ADMIN, null, 200);
    assertEquals(404, cp.call("DELETE", "/api/v1/queues/lab-f", ADMIN, null).statusCode());
    List<String> visible = new ArrayList<>();
    cp.json("GET", "/api/v1/queues", bob, null, 200).getJsonArray("items")
        .forEach(queue -> visible.add(((JsonObject) queue).getString("name")));
    assertEquals(List.of("lab"), visible, "a tenant sees the queues it may use");
    assertField(cp.call("PUT", "/api/v1/gpu-equivalents", ADMIN, "{\"H100\":0}"), 400, "H100");
    cp.call("POST", "/api/v1/tasks/" + task.getString("id") + "/stop", ADMIN, null);
  }

  @Test
  void aTaskBeyondItsQueuesMaxWaitsWithTheNumbersAndStartsWhenRoomReturns() throws Exception {
    cp.json("PUT", "/api/v1/gpu-equivalents", ADMIN, "{\"A100-SXM4-80GB\":0.5}", 200);
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"vision\",\"max\":1.0,\"tenants\":[\"alice\"]}", 201);
    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicBoolean watching = new AtomicBoolean(true);
    Thread watcher = new Thread(() -> {
      while (watching.get()) {
        try {
          seen.add(ControlPlaneHarness.await(cp.pool().query("SELECT count(*) FROM allocations a JOIN tasks t"
              + " ON t.id = a.task_id WHERE a.active AND t.queue = 'vision'").execute()).iterator().next().getLong(0));
          Thread.sleep(20);
        } catch (Exception e) {
          return;
        }
      }
    });
    watcher.start();
    List<String> ids = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        ids.add(cp.json("POST", "/api/v1/tasks", alice, "{\"name\":\"v" + i + "\",\"command\":[\"sleep\",\"3\"],"
            + "\"gpu_required\":1}", 201).getString("id"));
      }
      JsonObject waiting = null;
      for (int attempt = 0; attempt < 200 && waiting == null; attempt++) {
        for (String id : ids) {
          JsonObject task = cp.get("/api/v1/tasks/" + id);
          if (task.getJsonObject("reason") != null && "QuotaExceeded".equals(task.getJsonObject("reason").getString("code"))) {
            waiting = task;
          }
        }
        Thread.sleep(50);
      }
      assertTrue(waiting != null, "one of the three waits for its queue's quota");
      assertEquals("vision", waiting.getString("queue"));
      assertEquals("queue root/vision uses 1.0 of 1.0 GPU-eq; this task needs 0.5",
          waiting.getJsonObject("reason").getString("message"));
      // the reason is recorded as the round decides, the two binds commit just after
      eventually(Duration.ofSeconds(20), "the queue's usage at its max", () -> {
        try {
          JsonObject usage = cp.json("GET", "/api/v1/queues", alice, null, 200).getJsonArray("items").getJsonObject(0)
              .getJsonObject("usage");
          return usage.getDouble("gpu_eq") == 1.0 && usage.getLong("active_tasks") == 2;
        } catch (Exception e) {
          return false;
        }
      });
      eventually(Duration.ofSeconds(20), "the queue's gauges", () -> {
        try {
          String metrics = cp.call("GET", "/metrics", null, null).body();
          return metrics.contains("heteroflow_queue{measure=\"gpu_eq_max\",queue=\"vision\"} 1.0")
              && metrics.contains("heteroflow_queue{measure=\"gpu_eq_used\",queue=\"vision\"}");
        } catch (Exception e) {
          return false;
        }
      });
      for (String id : ids) {
        cp.awaitStatus(id, "succeeded");
      }
    } finally {
      watching.set(false);
      watcher.join();
    }
    assertTrue(seen.stream().allMatch(cards -> cards <= 2), "never more than 2 A100 (1.0 GPU-eq) held: " + seen);
    String metrics = cp.call("GET", "/metrics", null, null).body();
    assertTrue(metrics.contains("heteroflow_queue_wait_seconds_count{queue=\"vision\"} 3"),
        "each of the three waits timed in its queue");
    assertTrue(seen.contains(2L), "the queue was full at some point: " + seen);
  }

  @Test
  void aQueueWhoseTasksHaveAllEndedCanBeDeletedAndTheirHistoryMovesToItsParent() throws Exception {
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"short-lived\"}", 201);
    String id = cp.json("POST", "/api/v1/tasks", ADMIN, "{\"name\":\"done\",\"command\":[\"true\"],"
        + "\"queue\":\"short-lived\"}", 201).getString("id");
    eventually(Duration.ofSeconds(30), "the task to end", () -> "succeeded".equals(
        cp.get("/api/v1/tasks/" + id).getString("status")));
    cp.json("DELETE", "/api/v1/queues/short-lived", ADMIN, null, 200);
    assertEquals("root", cp.get("/api/v1/tasks/" + id).getString("queue"));
  }
}
