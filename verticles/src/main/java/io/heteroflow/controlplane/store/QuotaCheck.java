package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.QueueingConfig;
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
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The queues' quotas at bind (SPEC §13), where PostgreSQL has the last word: a task binds only if every queue on
 * its chain (its queue and each ancestor) that has a {@code max} keeps its subtree's use in GPU-equivalents within
 * it, and every one with {@code max_running} keeps its subtree's active tasks within that. The limited queues of a
 * batch are locked (in name order) for the rest of its transaction, so two binds into one full queue cannot both
 * pass. A batch whose queues have no limit anywhere on their chains reads nothing more.
 *
 * <p>Training borrow (SPEC §14): a training task its own chain refuses for GPU-equivalents may bind on a lender, a
 * queue idle at least {@code borrow_idle_seconds}, when the lender's lent total stays within
 * {@code training_borrow_percent} of its guarantee and its own use plus everything lent stays within the guarantee.
 * Lenders are locked with the limited queues (one sorted lock, so no deadlock), and so is every idle queue on a
 * batch's chains: a lender's own binds and its borrowers' are serialized on its row. The borrowed use is charged to
 * the lender ({@link Sql#CHARGED_QUEUE}), never to the borrower's {@code max}.
 */
final class QuotaCheck {
  private record Limit(String name, String parent, Double maxGpuEq, Integer maxRunning, boolean lending) {
  }

  /** A queue that may lend: its guarantee, its subtree's own use and what it has lent, staged. */
  private static final class Lender {
    final String name;
    final double guaranteed;
    double own;
    double lent;

    Lender(String name, double guaranteed) {
      this.name = name;
      this.guaranteed = guaranteed;
    }
  }

  private static final double EPSILON = 1e-9;
  private final Map<String, Limit> chain;
  private final Map<String, double[]> use;
  private final Map<String, Double> factors;
  private final Map<String, Lender> lenders;
  /** Queue → the lenders whose subtree holds it (their own use grows with its binds). */
  private final Map<String, List<String>> lenderTops;
  private final int borrowPercent;

  private QuotaCheck(Map<String, Limit> chain, Map<String, double[]> use, Map<String, Double> factors,
                     Map<String, Lender> lenders, Map<String, List<String>> lenderTops, int borrowPercent) {
    this.chain = chain;
    this.use = use;
    this.factors = factors;
    this.lenders = lenders;
    this.lenderTops = lenderTops;
    this.borrowPercent = borrowPercent;
  }

  /** {@link #read(SqlConnection, RowSet, QueueingConfig, boolean)} with no borrowing (a single bind). */
  static Future<QuotaCheck> read(SqlConnection conn, RowSet<Row> chains) {
    return read(conn, chains, QueueingConfig.DEFAULTS, false);
  }

  /**
   * From the batch's chains ({@link Sql#QUEUE_CHAINS}, read with its other rows): locks and reads what it needs;
   * {@code training}: whether the batch has a training task, which may borrow.
   */
  static Future<QuotaCheck> read(SqlConnection conn, RowSet<Row> chains, QueueingConfig queueing, boolean training) {
    Map<String, Limit> chain = new HashMap<>();
    chains.forEach(row -> chain.put(row.getString("name"), new Limit(row.getString("name"), row.getString("parent"),
        row.getDouble("max_gpu_eq"), row.getInteger("max_running"), Boolean.TRUE.equals(row.getBoolean("lending")))));
    String[] limited = chain.values().stream().filter(limit -> limit.maxGpuEq() != null || limit.maxRunning() != null)
        .map(Limit::name).sorted().toArray(String[]::new);
    // an idle queue on a chain is locked even without limits: its own binds and its borrowers' take turns
    boolean lendingOnChain = chain.values().stream().anyMatch(Limit::lending);
    if (limited.length == 0 && !lendingOnChain) {
      return Future.succeededFuture(new QuotaCheck(chain, Map.of(), Map.of(), Map.of(), Map.of(), 0));
    }
    // only a training task over a max borrows, so only then are lenders looked for
    Future<RowSet<Row>> candidates = training && limited.length > 0
        ? conn.preparedQuery(Sql.LENDER_CANDIDATES).execute(Tuple.of(queueing.borrowIdleSeconds()))
        : Future.succeededFuture(null);
    return candidates.compose(found -> {
      TreeSet<String> locking = new TreeSet<>(List.of(limited));
      chain.values().stream().filter(Limit::lending).forEach(limit -> locking.add(limit.name()));
      if (found != null) {
        found.forEach(row -> locking.add(row.getString("name")));
      }
      String[] lockNames = locking.toArray(new String[0]);
      return conn.preparedQuery(Sql.LOCK_QUOTA_QUEUES).execute(Tuple.of(lockNames, queueing.borrowIdleSeconds()))
          .compose(locked -> {
            if (limited.length == 0) {
              return Future.succeededFuture(new QuotaCheck(chain, Map.of(), Map.of(), Map.of(), Map.of(), 0));
            }
            Map<String, Lender> lenders = new HashMap<>();
            if (found != null) {
              locked.forEach(row -> {
                if (Boolean.TRUE.equals(row.getBoolean("idle"))) {
                  lenders.put(row.getString("name"), new Lender(row.getString("name"), row.getDouble("guaranteed")));
                }
              });
            }
            return readUse(conn, limited, lenders, queueing.trainingBorrowPercent(), chain);
          });
    });
  }

  private static Future<QuotaCheck> readUse(SqlConnection conn, String[] limited, Map<String, Lender> lenders,
                                            int percent, Map<String, Limit> chain) {
    TreeSet<String> tops = new TreeSet<>(List.of(limited));
    tops.addAll(lenders.keySet());
    Future<RowSet<Row>> subtrees = conn.preparedQuery(Sql.QUEUE_SUBTREES).execute(Tuple.of(tops.toArray(new String[0])));
    Future<RowSet<Row>> equivalents = conn.query(Sql.GPU_EQUIVALENTS).execute();
    return Future.all(subtrees, equivalents).compose(read -> {
      Map<String, List<String>> topsOf = new HashMap<>();
      Map<String, List<String>> lenderTops = new HashMap<>();
      subtrees.result().forEach(row -> {
        topsOf.computeIfAbsent(row.getString("name"), k -> new ArrayList<>()).add(row.getString("top"));
        if (lenders.containsKey(row.getString("top"))) {
          lenderTops.computeIfAbsent(row.getString("name"), k -> new ArrayList<>()).add(row.getString("top"));
        }
      });
      String[] queues = topsOf.keySet().toArray(new String[0]);
      String[] lenderNames = lenders.keySet().toArray(new String[0]);
      Future<RowSet<Row>> gpuEq = conn.preparedQuery(Sql.QUEUE_USAGE_OF).execute(Tuple.of(queues));
      Future<RowSet<Row>> active = conn.preparedQuery(Sql.QUEUE_ACTIVE_OF).execute(Tuple.of(queues));
      Future<RowSet<Row>> own = lenders.isEmpty() ? Future.succeededFuture(null)
          : conn.preparedQuery(Sql.QUEUE_OWN_USAGE_OF).execute(Tuple.of(lenderTops.keySet().toArray(new String[0])));
      Future<RowSet<Row>> lent = lenders.isEmpty() ? Future.succeededFuture(null)
          : conn.preparedQuery(Sql.QUEUE_LENT_OF).execute(Tuple.of(lenderNames));
      return Future.all(gpuEq, active, own, lent).map(all -> {
        Map<String, double[]> use = new HashMap<>();
        for (String top : limited) {
          use.put(top, new double[2]);
        }
        gpuEq.result().forEach(row -> topsOf.get(row.getString("queue")).stream().filter(use::containsKey)
            .forEach(top -> use.get(top)[0] += row.getDouble("gpu_eq")));
        active.result().forEach(row -> topsOf.get(row.getString("queue")).stream().filter(use::containsKey)
            .forEach(top -> use.get(top)[1] += row.getLong("active")));
        if (own.result() != null) {
          own.result().forEach(row -> lenderTops.get(row.getString("queue"))
              .forEach(top -> lenders.get(top).own += row.getDouble("gpu_eq")));
          lent.result().forEach(row -> lenders.get(row.getString("queue")).lent += row.getDouble("gpu_eq"));
        }
        Map<String, Double> factors = new HashMap<>();
        equivalents.result().forEach(row -> factors.put(row.getString("model"), row.getDouble("factor")));
        return new QuotaCheck(chain, use, factors, lenders, lenderTops, percent);
      });
    });
  }

  /** Whether every limited queue on {@code queue}'s chain is within its limits as read (its task already counted). */
  void verify(String queue) {
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used != null && ((up.maxGpuEq() != null && used[0] > up.maxGpuEq() + EPSILON)
          || (up.maxRunning() != null && used[1] > up.maxRunning()))) {
        throw new Rejected(ReasonCode.QuotaExceeded, String.format(Locale.ROOT,
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

  /** {@link #admit(String, String, double)} for a task that may not borrow. */
  void admit(String queue, double gpuEq) {
    admit(queue, null, gpuEq);
  }

  /**
   * Admits one more task of {@code queue} (of {@code type}) needing {@code gpuEq}: every limited queue on its chain
   * keeps within its limits, and the use is staged for the batch's later requests. A training task its chain
   * refuses only for GPU-equivalents binds on a lender instead, when one has the room: answers the lender (else
   * null). Throws the refusal (QuotaExceeded) otherwise.
   */
  String admit(String queue, String type, double gpuEq) {
    if (use.isEmpty()) {
      return null;
    }
    // the first refusal up the chain, GPU-eq before tasks at each queue; only one for GPU-eq alone may borrow
    String refusal = null;
    boolean running = false;
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used == null) {
        continue;
      }
      if (refusal == null && up.maxGpuEq() != null && used[0] + gpuEq > up.maxGpuEq() + EPSILON) {
        refusal = String.format(Locale.ROOT, "queue %s uses %.1f of %.1f GPU-eq; this task needs %.1f", path(up),
            used[0], up.maxGpuEq(), gpuEq);
      }
      if (up.maxRunning() != null && used[1] + 1 > up.maxRunning()) {
        running = true;
        refusal = refusal != null ? refusal
            : "queue " + path(up) + " runs " + (long) used[1] + " of at most " + up.maxRunning() + " tasks";
      }
    }
    Lender lender = refusal != null && !running && "training".equals(type) ? lenderFor(queue, gpuEq) : null;
    if (refusal != null && lender == null) {
      throw new Rejected(ReasonCode.QuotaExceeded, refusal);
    }
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      double[] used = use.get(up.name());
      if (used != null) {
        used[0] += lender == null ? gpuEq : 0;
        used[1] += 1;
      }
    }
    if (lender != null) {
      lender.lent += gpuEq;
      return lender.name;
    }
    lenderTops.getOrDefault(queue, List.of()).forEach(top -> lenders.get(top).own += gpuEq);
    return null;
  }

  /**
   * The lender with the most room left to lend that can take {@code gpuEq}: not the borrower's queue nor above or
   * below it (their use is one), its lent total within the percent of its guarantee, its own use and lent total
   * within the guarantee.
   */
  private Lender lenderFor(String queue, double gpuEq) {
    Lender best = null;
    double bestRoom = 0;
    for (Lender lender : lenders.values()) {
      boolean related = lenderTops.getOrDefault(queue, List.of()).contains(lender.name) || inChain(queue, lender.name);
      double byPercent = lender.guaranteed * borrowPercent / 100.0 - lender.lent;
      double byIdle = lender.guaranteed - lender.own - lender.lent;
      double room = Math.min(byPercent, byIdle);
      if (!related && gpuEq <= room + EPSILON
          && (best == null || room > bestRoom || (room == bestRoom && lender.name.compareTo(best.name) < 0))) {
        best = lender;
        bestRoom = room;
      }
    }
    return best;
  }

  private boolean inChain(String queue, String name) {
    for (Limit up = chain.get(queue); up != null; up = up.parent() == null ? null : chain.get(up.parent())) {
      if (up.name().equals(name)) {
        return true;
      }
    }
    return false;
  }
}
