package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Backfill without starvation (SPEC §13), end to end with real processes: eight nodes of eight cards are kept busy
 * by a steady stream of one-card tasks, and a 64-card group arrives behind them. Without a reservation each card
 * that frees is taken by the next one-card task and the group never starts; with one, the group gets an
 * estimated start, starts by it (plus one scheduling round), and short tasks that end before it still start on the
 * reserved cards meanwhile (nothing is held idle for it).
 */
class BackfillEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final Duration ROUND = Duration.ofSeconds(5);
  private static final String LONG = "{\"name\":\"long\",\"command\":[\"sleep\",\"5\"],\"gpu_required\":1,"
      + "\"expected_runtime_seconds\":7,\"timeout_seconds\":60}";
  private static final String SHORT = "{\"name\":\"short\",\"command\":[\"sleep\",\"1\"],\"gpu_required\":1,"
      + "\"timeout_seconds\":3}";
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .config(SchedulerConfig.defaults().withQueueing(new QueueingConfig(5, 600, 20)))
      .agents(nodes());

  private static List<io.heteroflow.agent.simulated.SimulatedNode> nodes() {
    List<io.heteroflow.agent.simulated.SimulatedNode> nodes = new ArrayList<>();
    for (int i = 1; i <= 8; i++) {
      nodes.add(ControlPlaneHarness.node("bf-" + i, GpuVendor.NVIDIA, 8));
    }
    return nodes;
  }

  private static long count(String sql) throws Exception {
    return ControlPlaneHarness.await(cp.pool().query(sql).execute()).iterator().next().getLong(0);
  }

  /** Keeps {@code pending} one-card tasks waiting (every fourth a short one). */
  private static void topUp(int pending) throws Exception {
    long waiting = count("SELECT count(*) FROM tasks WHERE status = 'pending' AND group_id IS NULL");
    for (long i = waiting; i < pending; i++) {
      cp.json("POST", "/api/v1/tasks", ADMIN, i % 4 == 0 ? SHORT : LONG, 201);
    }
  }

  @Test
  void aGangBehindAStreamOfSmallTasksStartsByItsEstimateWhileShortTasksBackfill() throws Exception {
    eventually(Duration.ofSeconds(60), "eight agents", () -> cp.get("/api/v1/nodes").getInteger("count") == 8);
    for (int i = 0; i < 64; i++) {
      cp.json("POST", "/api/v1/tasks", ADMIN, LONG, 201);
    }
    eventually(Duration.ofSeconds(60), "the 64 cards busy", () -> {
      try {
        return count("SELECT count(*) FROM tasks WHERE status IN ('scheduled', 'running')") == 64;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    topUp(12);
    String template = "{\"command\":[\"sleep\",\"2\"],\"gpu_required\":8,\"expected_runtime_seconds\":4}";
    String group = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"train-64\",\"members\":{\"template\":"
        + template + ",\"count\":8}}", 201).getString("id");
    Instant submitted = Instant.now();
    Instant firstEstimate = null;
    String status = "pending";
    while (status.equals("pending") && Duration.between(submitted, Instant.now()).toSeconds() < 60) {
      topUp(12);
      JsonObject view = cp.json("GET", "/api/v1/groups/" + group, ADMIN, null, 200);
      status = view.getString("status");
      if (firstEstimate == null && view.getString("estimated_start_at") != null) {
        firstEstimate = Instant.parse(view.getString("estimated_start_at"));
      }
      Thread.sleep(250);
    }
    assertNotNull(firstEstimate, "the waiting group showed an estimated start");
    assertTrue(!status.equals("pending"), "the group started within 60 s of a stream that never stopped");
    Row bound = ControlPlaneHarness.await(cp.pool().preparedQuery("SELECT scheduled_at, (SELECT count(*) FROM tasks"
        + " WHERE group_id = g.id AND status <> 'pending') AS members FROM task_groups g WHERE id = $1::uuid")
        .execute(io.vertx.sqlclient.Tuple.of(group))).iterator().next();
    assertEquals(8L, bound.getLong("members"), "all eight members bound together");
    Instant started = bound.getOffsetDateTime("scheduled_at").toInstant();
    assertTrue(!started.isAfter(firstEstimate.plus(ROUND).plusSeconds(1)),
        "started at " + started + ", estimated " + firstEstimate);
    long backfilled = count("SELECT count(*) FROM tasks WHERE name = 'short' AND scheduled_at > '"
        + submitted.plusSeconds(1) + "' AND finished_at IS NOT NULL AND finished_at <= '" + started + "'");
    assertTrue(backfilled > 0, "short tasks started and ended on the reserved cards while the group waited");
  }
}
