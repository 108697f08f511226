package io.heteroflow.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The benchmark's own code on a tiny scenario (20 nodes × 8 cards, a 40-task warm-up, one second of half
 * load, a 100-task burst) against the test PostgreSQL: correctness, not timing. Every task is bound exactly once, no card is double-booked, and the result object
 * carries the fields the issue asks for with sane values.
 */
class BenchSmokeTest {

  @Test
  @Timeout(120)
  void aTinyScenarioBindsEveryTaskOnceAndReportsSaneFigures() throws Exception {
    Database database = TestPostgres.freshDatabase();
    BenchScenario tiny = new BenchScenario("smoke", 20, BenchScenario.CARDS_PER_NODE, 100);
    BenchRunner.Options options = new BenchRunner.Options(0.3, 60, 12, 10, 42, true, null, 40, 1, 0);

    JsonObject result = new BenchRunner(tiny, options, System.err).run(database, TestPostgres::freshDatabase);

    for (String field : List.of("scenario", "nodes", "tasks", "drain_seconds", "bound_per_s", "p50_ms", "p99_ms",
        "pg_bind_tx_per_s_1", "pg_bind_tx_per_s_16", "round_p50_ms", "round_p99_ms", "bind_conflicts",
        "cpu_seconds", "peak_rss_mb")) {
      assertTrue(result.containsKey(field) && result.getValue(field) != null, "missing field " + field + " in " + result);
    }
    assertEquals("smoke", result.getString("scenario"));
    assertEquals(20, result.getInteger("nodes"));
    assertEquals(100, result.getInteger("tasks"));
    assertEquals("drained", result.getString("ending"), result.encodePrettily());
    assertEquals(100L, result.getLong("bound"));
    assertTrue(result.getDouble("bound_per_s") > 0);
    assertTrue(result.getDouble("drain_seconds") > 0);
    assertTrue(result.getDouble("p50_ms") >= 0);
    assertTrue(result.getDouble("p50_ms") <= result.getDouble("p99_ms"));
    assertTrue(result.getDouble("p99_ms") <= result.getDouble("max_ms"));
    assertTrue(result.getDouble("pg_bind_tx_per_s_1") > 0);
    assertTrue(result.getDouble("pg_bind_tx_per_s_16") > 0);
    assertTrue(result.getLong("rounds") >= 1);
    assertTrue(result.getDouble("cpu_seconds") > 0);
    assertTrue(result.getJsonArray("violations").isEmpty(), result.getJsonArray("violations").encode());
    assertNotNull(result.getJsonObject("phases"));
    JsonObject halfLoad = result.getJsonObject("half_load");
    assertNotNull(halfLoad, "half-load phase missing: " + result.encodePrettily());
    assertEquals(halfLoad.getInteger("tasks").longValue(), halfLoad.getLong("bound"), halfLoad.encode());
    assertTrue(halfLoad.getDouble("p50_ms") <= halfLoad.getDouble("p99_ms"), halfLoad.encode());

    // the same facts, checked here independently of the benchmark's own invariant queries
    try (Connection connection = DriverManager.getConnection(database.jdbcUrl(), database.options().getUser(),
        database.options().getPassword()); Statement sql = connection.createStatement()) {
      assertEquals(100, count(sql, "SELECT count(*) FROM tasks WHERE name = 'bench' AND status = 'scheduled'"
          + " AND node_id IS NOT NULL AND scheduled_at >= created_at"));
      assertEquals(0, count(sql, "SELECT count(*) FROM tasks WHERE name IN ('bench-warmup', 'bench-half-load')"
          + " AND status <> 'failed'"), "warm-up and half-load tasks are released");
      assertEquals(0, count(sql, "SELECT count(*) FROM tasks t WHERE t.name = 'bench' AND (SELECT count(*)"
          + " FROM task_events e WHERE e.task_id = t.id AND e.to_status = 'scheduled') <> 1"));
      assertEquals(0, count(sql, "SELECT count(*) FROM (SELECT node_id, gpu_index FROM allocations WHERE active"
          + " AND kind = 'whole' GROUP BY 1, 2 HAVING count(*) > 1) x"));
      assertEquals(0, count(sql, "SELECT count(*) FROM allocations w JOIN allocations s ON s.node_id = w.node_id"
          + " AND s.gpu_index = w.gpu_index WHERE w.active AND s.active AND w.kind = 'whole' AND s.kind = 'shard'"));
      assertEquals(0, count(sql, "SELECT count(*) FROM nodes n WHERE n.gpu_used > n.gpu_total OR n.gpu_used <>"
          + " (SELECT coalesce(sum(t.gpu_required), 0) FROM tasks t WHERE t.node_id = n.id AND t.status = 'scheduled')"));
      assertEquals(count(sql, "SELECT coalesce(sum(gpu_required), 0) FROM tasks WHERE status = 'scheduled'"),
          count(sql, "SELECT count(*) FROM allocations WHERE active AND kind = 'whole'"));
    }
  }

  @Test
  void badFlagsAreRefusedByName() {
    assertMessage("--frobnicate", List.of("--frobnicate", "1"));
    assertMessage("--scenario", List.of("--scenario", "huge"));
    assertMessage("--nodes", List.of("--nodes", "many"));
    assertMessage("--tasks", List.of("--tasks", "0"));
    assertMessage("--pg-seconds", List.of("--pg-seconds", "-1"));
    assertMessage("--probes", List.of("--probes", "maybe"));
    assertMessage("--json", List.of("--json"));
  }

  private static void assertMessage(String flag, List<String> args) {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> BenchCommand.run(args));
    assertTrue(refused.getMessage().contains(flag), refused.getMessage());
  }

  private static long count(Statement sql, String query) throws Exception {
    try (ResultSet rows = sql.executeQuery(query)) {
      rows.next();
      return rows.getLong(1);
    }
  }
}
