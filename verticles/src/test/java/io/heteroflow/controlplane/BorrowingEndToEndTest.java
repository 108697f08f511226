package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Borrowing between queues end to end (SPEC §13, §14), real processes on simulated agents, real PostgreSQL:
 * reclaim takes back exactly the capacity a queue borrowed above its guarantee when the owner wants it, whatever the
 * borrower's priority, and never takes it below its guarantee; a training task over its queue's max borrows another
 * queue's idle guarantee, up to 20 % of it. Each test has its own pool of nodes (label {@code pool}).
 */
class BorrowingEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .config(SchedulerConfig.defaults().withQueueing(new QueueingConfig(300, 1, 20)))
      .agents(List.of(node("r-1", "reclaim", 2), node("r-2", "reclaim", 2), node("t-1", "train", 4),
          node("t-2", "train", 4)));
  private static String alice;
  private static String bob;
  private static String carol;

  private static SimulatedNode node(String id, String pool, int cards) {
    return new SimulatedNode(id, GpuVendor.NVIDIA, "A100-SXM4-80GB", cards, 81920, 16, 128, 5, 4096, List.of(),
        List.of(), Map.of("pool", pool), Map.of(), List.of("127.0.0.1"), null);
  }

  @BeforeAll
  static void start() throws Exception {
    eventually(Duration.ofSeconds(60), "four agents", () -> cp.get("/api/v1/nodes").getInteger("count") == 4);
    alice = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
    carol = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"carol\"}", 201).getString("token");
  }

  private static String submit(String token, String name, String type, int priority, boolean preemptible, int cards,
                               String pool) throws Exception {
    return cp.json("POST", "/api/v1/tasks", token, "{\"name\":\"" + name + "\",\"type\":\"" + type
        + "\",\"command\":[\"sleep\",\"120\"],\"gpu_required\":" + cards + ",\"priority\":" + priority
        + ",\"preemptible\":" + preemptible + ",\"node_selector\":{\"pool\":\"" + pool + "\"}}", 201).getString("id");
  }

  private static JsonObject queue(String name) throws Exception {
    for (Object each : cp.json("GET", "/api/v1/queues", ADMIN, null, 200).getJsonArray("items")) {
      if (name.equals(((JsonObject) each).getString("name"))) {
        return (JsonObject) each;
      }
    }
    throw new AssertionError("no queue " + name);
  }

  private static List<Row> rows(String sql, Object... params) throws Exception {
    List<Row> rows = new ArrayList<>();
    await(cp.pool().preparedQuery(sql).execute(Tuple.from(params))).forEach(rows::add);
    return rows;
  }

  private static double metric(String series) throws Exception {
    for (String line : cp.call("GET", "/metrics", null, null).body().split("\n")) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    return 0;
  }

  @Test
  void aQueueBelowItsGuaranteeReclaimsOnlyWhatWasBorrowedWhateverThePriority() throws Exception {
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"qa\",\"guaranteed\":2,\"tenants\":[\"alice\"]}", 201);
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"qb\",\"guaranteed\":2,\"tenants\":[\"bob\"]}", 201);
    List<String> borrowers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      borrowers.add(submit(bob, "b" + i, "job", 60, true, 1, "reclaim"));
    }
    for (String id : borrowers) {
      cp.awaitStatus(id, "running");
    }
    assertEquals(2.0, queue("qb").getJsonObject("usage").getDouble("borrowed_gpu_eq"), 1e-9, "qb borrows 2 of 4");
    // a task of lower priority than every borrower: only reclaim can make room for it
    String owner = submit(alice, "a0", "job", 10, false, 2, "reclaim");
    JsonObject running = cp.awaitStatus(owner, "running");
    List<Row> preempted = rows("SELECT id, node_id, preempt_count, reason_message FROM tasks WHERE queue = 'qb'"
        + " AND preempt_count > 0");
    assertEquals(2, preempted.size(), "only as many as the task needs");
    assertEquals(2, rows("SELECT id FROM tasks WHERE queue = 'qb' AND status = 'running'").size(),
        "qb keeps its guarantee");
    assertEquals(2.0, queue("qb").getJsonObject("usage").getDouble("gpu_eq"), 1e-9);
    assertEquals(2.0, queue("qa").getJsonObject("usage").getDouble("gpu_eq"), 1e-9);
    List<Row> events = rows("SELECT message FROM task_events WHERE task_id = $1 AND kind = 'preemption'",
        java.util.UUID.fromString(owner));
    String plan = events.stream().map(row -> row.getString("message")).filter(message -> message
        .contains("reclaim for queue qa")).findFirst().orElseThrow(() -> new AssertionError("the plan says it is a"
            + " reclaim: " + events.stream().map(row -> row.getString("message")).toList()));
    assertTrue(plan.contains("node " + running.getString("node") + ", 2 victim(s)"), "two victims, on its node: " + plan);
    assertTrue(plan.contains("qb (uses 4.0 of its 2.0 guaranteed GPU-eq)"), plan);
    assertEquals(1.0, metric("heteroflow_queue_reclaims_total{queue=\"qa\"}"));
    // qa is at its guarantee now: a further task of it reclaims nothing, and qb stays at its guarantee
    String more = submit(alice, "a1", "job", 10, false, 1, "reclaim");
    JsonObject waiting = cp.awaitReason(more, "InsufficientResources");
    Thread.sleep(1500);
    assertEquals("pending", cp.get("/api/v1/tasks/" + more).getString("status"), waiting.encode());
    assertEquals(2, rows("SELECT id FROM tasks WHERE queue = 'qb' AND status = 'running'").size());
    assertEquals(1.0, metric("heteroflow_queue_reclaims_total{queue=\"qa\"}"));
    for (String id : List.of(owner, more)) {
      cp.call("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null);
    }
    borrowers.forEach(id -> {
      try {
        cp.call("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  @Test
  void aTrainingTaskOverItsMaxBorrowsAnIdleQueuesGuaranteeUpToTwentyPercent() throws Exception {
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"idle\",\"guaranteed\":5}", 201);
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"train\",\"guaranteed\":1,\"max\":1,"
        + "\"tenants\":[\"carol\"]}", 201);
    Thread.sleep(1100); // idle for borrow_idle_seconds (1) since its creation
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add(submit(carol, "t" + i, "training", 50, false, 1, "train"));
    }
    eventually(Duration.ofSeconds(20), "two of three running", () -> ids.stream()
        .filter(id -> "running".equals(cp.get("/api/v1/tasks/" + id).getString("status"))).count() == 2);
    String third = ids.stream().filter(id -> !"running".equals(cp.get("/api/v1/tasks/" + id).getString("status")))
        .findFirst().orElseThrow();
    JsonObject waits = cp.awaitReason(third, "QuotaExceeded");
    assertEquals("pending", waits.getString("status"));
    List<Row> lent = rows("SELECT id FROM tasks WHERE borrowed_from = 'idle' AND status IN ('scheduled', 'running')");
    assertEquals(1, lent.size(), "one card (1.0 GPU-eq) is 20 % of idle's 5");
    JsonObject train = queue("train");
    JsonObject idle = queue("idle");
    assertEquals(1.0, train.getDouble("borrowed"), 1e-9);
    assertEquals(1.0, idle.getDouble("lent"), 1e-9);
    assertEquals(1.0, train.getJsonObject("usage").getDouble("gpu_eq"), 1e-9, "train's max is not passed");
    Thread.sleep(1500);
    assertEquals("pending", cp.get("/api/v1/tasks/" + third).getString("status"), "still no more than 20 %");
    // borrowed capacity returns when its task ends: the waiting one borrows it in turn
    String borrower = lent.get(0).getUUID("id").toString();
    cp.call("POST", "/api/v1/tasks/" + borrower + "/stop", ADMIN, null);
    cp.awaitStatus(third, "running");
    assertEquals(List.of(third), rows("SELECT id::text FROM tasks WHERE borrowed_from = 'idle'"
        + " AND status IN ('scheduled', 'running')").stream().map(row -> row.getString(0)).toList());
    for (String id : ids) {
      cp.call("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null);
    }
  }
}
