package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.store.BindChecks.Rejected;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The queues' quotas at bind (SPEC §13), where PostgreSQL has the last word: a task binds only if every queue on
 * its chain (its queue and each ancestor) that has a {@code max} keeps its subtree's use in GPU-equivalents within
 * it, and every one with {@code max_running} keeps its subtree's active tasks within that. The limited queues of a
 * batch are locked (in name order) for the rest of its transaction, so two binds into one full queue cannot both
 * pass. A batch whose queues have no limit anywhere on their chains reads nothing more.
 */
final class QuotaCheck {
  private record Limit(String name, String parent, Double maxGpuEq, Integer maxRunning) {
  }

  private final Map<String, Limit> chain;
  private final Map<String, double[]> use;
  private final Map<String, Double> factors;

  private QuotaCheck(Map<String, Limit> chain, Map<String, double[]> use, Map<String, Double> factors) {
    this.chain = chain;
    this.use = use;
    this.factors = factors;
  }

  /** From the batch's chains ({@link Sql#QUEUE_CHAINS}, read with its other rows): locks and reads what it needs. */
  static Future<QuotaCheck> read(SqlConnection conn, RowSet<Row> chains) {
    Map<String, Limit> chain = new HashMap<>();
    chains.forEach(row -> chain.put(row.getString("name"), new Limit(row.getString("name"), row.getString("parent"),
        row.getDouble("max_gpu_eq"), row.getInteger("max_running"))));
    String[] limited = chain.values().stream().filter(limit -> limit.maxGpuEq() != null || limit.maxRunning() != null)
        .map(Limit::name).sorted().toArray(String[]::new);
    if (limited.length == 0) {
      return Future.succeededFuture(new QuotaCheck(chain, Map.of(), Map.of()));
    }
    Future<RowSet<Row>> locked = conn.preparedQuery(Sql.LOCK_QUEUES_NAMED).execute(Tuple.of(limited));
    Future<RowSet<Row>> subtrees = conn.preparedQuery(Sql.QUEUE_SUBTREES).execute(Tuple.of(limited));
    Future<RowSet<Row>> equivalents = conn.query(Sql.GPU_EQUIVALENTS).execute();
    return Future.all(locked, subtrees, equivalents).compose(read -> {
      Map<String, List<String>> topsOf = new HashMap<>();
      subtrees.result().forEach(row -> topsOf.computeIfAbsent(row.getString("name"), k -> new ArrayList<>())
          .add(row.getString("top")));
      String[] queues = topsOf.keySet().toArray(new String[0]);
      Future<RowSet<Row>> gpuEq = conn.preparedQuery(Sql.QUEUE_USAGE_OF).execute(Tuple.of(queues));
      Future<RowSet<Row>> active = conn.preparedQuery(Sql.QUEUE_ACTIVE_OF).execute(Tuple.of(queues));
      return Future.all(gpuEq, active).map(both -> {
        Map<String, double[]> use = new HashMap<>();
        for (String top : limited) {
          use.put(top, new double[2]);
        }
        gpuEq.result().forEach(row -> topsOf.get(row.getString("queue"))
            .forEach(top -> use.get(top)[0] += row.getDouble("gpu_eq")));
        active.result().forEach(row -> topsOf.get(row.getString("queue"))
            .forEach(top -> use.get(top)[1] += row.getLong("active")));
        Map<String, Double> factors = new HashMap<>();
        equivalents.result().forEach(row -> factors.put(row.getString("model"), row.getDouble("factor")));
        return new QuotaCheck(chain, use, factors);
      });
    });
  }

  /** Whether every limited queue on {@code queue}'s chain is within its limits as read (its task already counted). */
  void verify(String queue) {
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used != null && ((up.maxGpuEq() != null && used[0] > up.maxGpuEq() + 1e-9)
          || (up.maxRunning() != null && used[1] > up.maxRunning()))) {
        throw new Rejected(ReasonCode.QuotaExceeded, String.format(java.util.Locale.ROOT,
            "queue %s would hold %.1f GPU-eq (max %s) and %d active tasks (max %s) with this task", path(up), used[0],
            up.maxGpuEq(), (long) used[1], up.maxRunning()));
      }
    }
  }

  /** root/vision/detection. */
  private String path(Limit queue) {
    StringBuilder path = new StringBuilder(queue.name());
    for (Limit up = chain.get(queue.parent()); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      path.insert(0, up.name() + "/");
    }
    return path.toString();
  }

  /** A card of {@code model}: its factor (1.0 for a model the table does not list). */
  double factor(String model) {
    return model == null ? 1.0 : factors.getOrDefault(model, 1.0);
  }

  /**
   * Admits one more task of {@code queue} needing {@code gpuEq}: every limited queue on its chain keeps within its
   * limits, and the use is staged for the batch's later requests. Throws the refusal (QuotaExceeded) otherwise.
   */
  void admit(String queue, double gpuEq) {
    if (use.isEmpty()) {
      return;
    }
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used == null) {
        continue;
      }
      if (up.maxGpuEq() != null && used[0] + gpuEq > up.maxGpuEq() + 1e-9) {
        throw new Rejected(ReasonCode.QuotaExceeded, String.format(java.util.Locale.ROOT,
            "queue %s uses %.1f of %.1f GPU-eq; this task needs %.1f", path(up), used[0], up.maxGpuEq(), gpuEq));
      }
      if (up.maxRunning() != null && used[1] + 1 > up.maxRunning()) {
        throw new Rejected(ReasonCode.QuotaExceeded, "queue " + path(up) + " runs " + (long) used[1] + " of at most "
            + up.maxRunning() + " tasks");
      }
    }
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used != null) {
        used[0] += gpuEq;
        used[1] += 1;
      }
    }
  }
}
