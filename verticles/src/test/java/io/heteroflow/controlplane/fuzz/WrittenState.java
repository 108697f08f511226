package io.heteroflow.controlplane.fuzz;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A fingerprint of every row of every table in one query (an md5 of each table's rows), so a fuzz case can
 * assert that a refused request wrote nothing: not a row added, changed or removed anywhere.
 */
final class WrittenState {
  /**
   * The columns requests write, where the control plane also writes others on its own: the scheduler's pending
   * reasons and estimates of tasks, and the borrow patrol's idle_since of queues.
   */
  private static final Map<String, String> PROJECTED = Map.of(
      "tasks", "id, tenant, name, type, status, priority, gpu_required, spec, queue, service_id, node_id, gpu_indices",
      "queues", "name, parent, weight, guaranteed, max_gpu_eq, max_cards_per_task, max_running, tenants, version");
  /** Tables written on the control plane's own beat: the leader lease, members' last-seen, reason events. */
  private static final Set<String> OWN_BEAT = Set.of("leader", "control_planes", "task_events",
      "flyway_schema_history");
  private final Pool pool;
  private final String query;
  private final List<String> tables;

  private WrittenState(Pool pool, List<String> tables) {
    this.pool = pool;
    this.tables = tables;
    List<String> parts = new ArrayList<>();
    for (String table : tables) {
      String rows = PROJECTED.containsKey(table) ? "(SELECT " + PROJECTED.get(table) + " FROM " + table + ")"
          : "\"" + table + "\"";
      parts.add("(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM " + rows + " t)");
    }
    this.query = "SELECT " + String.join(", ", parts);
  }

  static WrittenState of(Pool pool) throws Exception {
    List<String> tables = new ArrayList<>();
    for (Row row : ControlPlaneHarness.await(pool.query("SELECT table_name FROM information_schema.tables"
        + " WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name").execute())) {
      if (!OWN_BEAT.contains(row.getString(0))) {
        tables.add(row.getString(0));
      }
    }
    return new WrittenState(pool, tables);
  }

  /** Table → fingerprint of its rows, now. */
  Map<String, String> read() throws Exception {
    Row row = ControlPlaneHarness.await(pool.query(query).execute()).iterator().next();
    Map<String, String> fingerprints = new LinkedHashMap<>();
    for (int i = 0; i < tables.size(); i++) {
      fingerprints.put(tables.get(i), row.getString(i));
    }
    return fingerprints;
  }

  /** The tables whose rows differ between two readings. */
  static List<String> changed(Map<String, String> before, Map<String, String> after) {
    return before.keySet().stream().filter(table -> !before.get(table).equals(after.get(table))).toList();
  }
}
