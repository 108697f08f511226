package io.heteroflow.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bench --scenario gangs} on 20 nodes, 4 groups of 2–3 members × 8 cards and 6 single tasks against the
 * test PostgreSQL: correctness, not timing. Every group is bound whole, the watcher sampled the run and never saw
 * a partly bound group, and no invariant breaks (the allocation history's and the groups' own included).
 */
class GangBenchSmokeTest {
  @Test
  @Timeout(120)
  void aTinyBurstBindsEveryGroupWholeAndNothingTwice() throws Exception {
    Database database = TestPostgres.freshDatabase();
    BenchRunner.Options options = new BenchRunner.Options(0.3, 60, 12, 10, 42, true, null, 0, 0, 0);
    GangBench.Mix mix = GangBench.mix(4, 6, 3, 42);
    JsonObject result = new GangBench(20, 4, 6, 3, options, System.err).run(database);

    assertTrue(result.getJsonArray("violations").isEmpty(), result.encodePrettily());
    assertEquals("drained", result.getString("ending"), result.encodePrettily());
    assertEquals(4L, result.getLong("groups_bound"), result.encodePrettily());
    assertEquals((long) mix.members(), result.getLong("members_bound"));
    assertEquals(6L, result.getLong("singles_bound"));
    assertEquals(0, result.getInteger("partial_groups_seen"));
    assertTrue(result.getJsonObject("watch").getInteger("samples") > 0, result.encodePrettily());
    assertTrue(result.getDouble("all_groups_bound_seconds") > 0);
    assertTrue(result.getDouble("groups_per_s") > 0);
    assertEquals(4, result.getJsonObject("phases").getJsonObject("decide_groups_empty_cluster").getInteger("placed"));

    // the same facts, checked here independently of the benchmark's own queries
    try (Connection connection = DriverManager.getConnection(database.jdbcUrl(), database.options().getUser(),
        database.options().getPassword()); Statement sql = connection.createStatement()) {
      assertEquals(4, count(sql, "SELECT count(*) FROM task_groups WHERE status = 'scheduled'"
          + " AND scheduled_at IS NOT NULL AND master_node IS NOT NULL"));
      assertEquals(0, count(sql, "SELECT count(*) FROM tasks WHERE status <> 'scheduled' OR node_id IS NULL"));
      assertEquals(0, count(sql, "SELECT count(*) FROM (SELECT node_id, gpu_index FROM allocations WHERE active"
          + " AND kind = 'whole' GROUP BY 1, 2 HAVING count(*) > 1) x"));
      assertEquals(mix.cards(), count(sql, "SELECT count(*) FROM allocations WHERE active AND kind = 'whole'"));
      assertEquals(0, count(sql, "SELECT count(*) FROM tasks m JOIN task_groups g ON g.id = m.group_id"
          + " WHERE m.xmin::text <> g.xmin::text"), "a group and its members are written by one transaction");
    }
  }

  private static long count(Statement sql, String query) throws Exception {
    try (ResultSet rows = sql.executeQuery(query)) {
      rows.next();
      return rows.getLong(1);
    }
  }
}
