package io.heteroflow.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What must hold after a run, checked in PostgreSQL over every task (burst and probes): each a count of
 * offending rows that must be zero. Answers the violated ones as {check, rows}.
 */
final class Invariants {
  private static final String ACTIVE = "('scheduled', 'running', 'stopping', 'preempting')";
  private static final Map<String, String> CHECKS = new LinkedHashMap<>();

  static {
    CHECKS.put("burst task in a state other than pending or scheduled (no agents run)",
        "SELECT count(*) FROM tasks WHERE name = '" + TaskMix.NAME + "' AND status NOT IN ('pending', 'scheduled')");
    CHECKS.put("task bound more than once (pending → scheduled events)",
        "SELECT count(*) FROM (SELECT task_id FROM task_events WHERE to_status = 'scheduled'"
            + " GROUP BY task_id HAVING count(*) > 1) x");
    CHECKS.put("scheduled task without exactly one bind event",
        "SELECT count(*) FROM tasks t WHERE t.status = 'scheduled' AND (SELECT count(*) FROM task_events e"
            + " WHERE e.task_id = t.id AND e.to_status = 'scheduled') <> 1");
    CHECKS.put("pending task holding an allocation or a node",
        "SELECT count(*) FROM tasks t WHERE t.status = 'pending' AND (t.node_id IS NOT NULL OR EXISTS"
            + " (SELECT 1 FROM allocations a WHERE a.task_id = t.id AND a.active))");
    CHECKS.put("whole-card task whose cards differ from its active allocations",
        "SELECT count(*) FROM tasks t WHERE t.status IN " + ACTIVE + " AND t.gpu_required > 0 AND ("
            + "cardinality(t.gpu_indices) <> t.gpu_required OR (SELECT count(*) FROM allocations a WHERE a.task_id = t.id"
            + " AND a.active AND a.kind = 'whole' AND a.node_id = t.node_id AND a.gpu_index = ANY(t.gpu_indices))"
            + " <> t.gpu_required OR EXISTS (SELECT 1 FROM allocations a WHERE a.task_id = t.id AND a.active"
            + " AND (a.kind <> 'whole' OR a.node_id <> t.node_id)))");
    CHECKS.put("fractional task without exactly one active shard on its node",
        "SELECT count(*) FROM tasks t WHERE t.status IN " + ACTIVE + " AND t.gpu_required = 0 AND t.gpu_memory_mb > 0"
            + " AND (SELECT count(*) FROM allocations a WHERE a.task_id = t.id AND a.active AND a.kind = 'shard'"
            + " AND a.node_id = t.node_id AND a.memory_mb = t.gpu_memory_mb) <> 1");
    CHECKS.put("card double-booked by whole-card tasks",
        "SELECT count(*) FROM (SELECT node_id, gpu_index FROM allocations WHERE active AND kind = 'whole'"
            + " GROUP BY 1, 2 HAVING count(*) > 1) x");
    CHECKS.put("card held whole and sharded at once",
        "SELECT count(*) FROM allocations w JOIN allocations s ON s.node_id = w.node_id AND s.gpu_index = w.gpu_index"
            + " WHERE w.active AND s.active AND w.kind = 'whole' AND s.kind = 'shard'");
    CHECKS.put("card whose shards exceed its capacity (total - max(500 MB, 10 %))",
        "SELECT count(*) FROM (SELECT a.node_id, a.gpu_index FROM allocations a JOIN cards c ON c.node_id = a.node_id"
            + " AND c.gpu_index = a.gpu_index WHERE a.active AND a.kind = 'shard' GROUP BY 1, 2, c.memory_total_mb"
            + " HAVING sum(a.memory_mb) > c.memory_total_mb - greatest(500, c.memory_total_mb * 10 / 100)) x");
    CHECKS.put("allocation on a card its node does not report",
        "SELECT count(*) FROM allocations a LEFT JOIN cards c ON c.node_id = a.node_id AND c.gpu_index = a.gpu_index"
            + " WHERE a.active AND c.node_id IS NULL");
    CHECKS.put("node whose gpu_used differs from its active tasks' cards, or exceeds gpu_total",
        "SELECT count(*) FROM nodes n WHERE n.gpu_used > n.gpu_total OR n.gpu_used <> (SELECT coalesce(sum("
            + "t.gpu_required), 0) FROM tasks t WHERE t.node_id = n.id AND t.status IN " + ACTIVE + ")");
  }

  private Invariants() {}

  static JsonArray check(Pool client) throws Exception {
    JsonArray violations = new JsonArray();
    for (Map.Entry<String, String> check : CHECKS.entrySet()) {
      long rows = BenchFutures.await(client.query(check.getValue()).execute()).iterator().next().getLong(0);
      if (rows != 0) {
        violations.add(new JsonObject().put("check", check.getKey()).put("rows", rows));
      }
    }
    return violations;
  }
}
