package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;

/**
 * A reclaim plan's guarantees in PostgreSQL (SPEC §13), inside the plan's transaction: with the reclaimer's queue
 * and the victims' queues locked (name order), the reclaimer's queue must still fit the task within its guarantee,
 * and each victim's queue must keep at least its guarantee once the victims are gone. Use is charged use (a lender's
 * lent capacity is its own), the same as the scheduler's view, so a plan the round made on a true view passes.
 */
final class ReclaimCheck {
  private static final double EPSILON = 1e-9;

  private ReclaimCheck() {}

  /** Whether the plan still holds; the locks stay until the transaction ends. */
  static Future<Boolean> holds(SqlConnection conn, String reclaimer, double need, List<UUID> victims) {
    UUID[] ids = victims.toArray(new UUID[0]);
    return conn.preparedQuery(Sql.RECLAIM_VICTIM_USE).execute(Tuple.of(ids)).compose(taken -> {
      Map<String, Double> takenByQueue = new HashMap<>();
      taken.forEach(row -> takenByQueue.merge(row.getString("queue"), row.getDouble("gpu_eq") == null ? 0.0
          : row.getDouble("gpu_eq"), Double::sum));
      TreeSet<String> queues = new TreeSet<>(takenByQueue.keySet());
      queues.add(reclaimer);
      String[] names = queues.toArray(new String[0]);
      Future<RowSet<Row>> locked = conn.preparedQuery(Sql.LOCK_QUOTA_QUEUES).execute(Tuple.of(names, 0));
      Future<RowSet<Row>> subtrees = conn.preparedQuery(Sql.QUEUE_SUBTREES).execute(Tuple.of(names));
      return Future.all(locked, subtrees).compose(read -> {
        Map<String, List<String>> topsOf = new HashMap<>();
        subtrees.result().forEach(row -> topsOf.computeIfAbsent(row.getString("name"), k -> new ArrayList<>())
            .add(row.getString("top")));
        return conn.preparedQuery(Sql.QUEUE_USAGE_OF).execute(Tuple.of(topsOf.keySet().toArray(new String[0])))
            .map(usage -> {
              Map<String, Double> use = new HashMap<>();
              usage.forEach(row -> topsOf.get(row.getString("queue"))
                  .forEach(top -> use.merge(top, row.getDouble("gpu_eq"), Double::sum)));
              Map<String, Double> guaranteed = new HashMap<>();
              locked.result().forEach(row -> guaranteed.put(row.getString("name"), row.getDouble("guaranteed")));
              if (use.getOrDefault(reclaimer, 0.0) + need > guaranteed.getOrDefault(reclaimer, 0.0) + EPSILON) {
                return false;
              }
              return takenByQueue.entrySet().stream().allMatch(each -> !"root".equals(each.getKey())
                  && use.getOrDefault(each.getKey(), 0.0) - each.getValue()
                  >= guaranteed.getOrDefault(each.getKey(), 0.0) - EPSILON);
            });
      });
    });
  }
}
