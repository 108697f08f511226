package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Queues and GPU-equivalents in PostgreSQL. A create or update locks every queue row first (in name order), so
 * the tree's rules — a parent exists, no cycle, the children's guarantees fit in their parent's, a child's
 * maximum within its parent's — are checked against rows no one else changes meanwhile.
 */
public final class QueueStore {
  private final Pool pool;

  public QueueStore(Pool pool) {
    this.pool = pool;
  }

  /** Why a write was refused: the field and what is wrong (the API turns it into a 400 or 409). */
  public static final class Refused extends RuntimeException {
    private final String field;
    private final boolean conflict;

    Refused(String field, String message, boolean conflict) {
      super(message, null, false, false);
      this.field = field;
      this.conflict = conflict;
    }

    public String field() {
      return field;
    }

    public boolean conflict() {
      return conflict;
    }
  }

  /**
   * A queue's live use: GPU-equivalents held by its own active tasks, its active and pending tasks, and of the
   * active ones those running.
   */
  public record Usage(double gpuEq, long active, long pending, long running) {
    public static final Usage NONE = new Usage(0, 0, 0, 0);

    public Usage(double gpuEq, long active, long pending) {
      this(gpuEq, active, pending, 0);
    }
  }

  /** What waits ahead of a newcomer in a queue: pending single tasks and pending groups. */
  public record Ahead(long tasks, long groups) {
    public long total() {
      return tasks + groups;
    }
  }

  /** The pending tasks and groups of {@code queue} a newcomer of {@code priority} would queue behind. */
  public Future<Ahead> ahead(String queue, int priority) {
    return pool.preparedQuery(Sql.QUEUE_AHEAD).execute(Tuple.of(queue, priority)).map(rows -> {
      Row row = rows.iterator().next();
      return new Ahead(row.getLong("tasks"), row.getLong("groups"));
    });
  }

  public Future<List<QueueRecord>> list() {
    return pool.query(Sql.QUEUES).execute().map(QueueStore::records);
  }

  /** Creates {@code queue}; empty when the name is taken. */
  public Future<Optional<QueueRecord>> create(QueueRecord queue) {
    return pool.withTransaction(conn -> lockAll(conn).compose(all -> {
      check(queue, all);
      return conn.preparedQuery(Sql.INSERT_QUEUE).execute(params(queue))
          .map(rows -> rows.size() == 0 ? Optional.<QueueRecord>empty() : Optional.of(QueueRecord.from(rows.iterator().next())));
    }));
  }

  /** Replaces {@code queue}'s settings; empty when there is no such queue. */
  public Future<Optional<QueueRecord>> update(QueueRecord queue) {
    return pool.withTransaction(conn -> lockAll(conn).compose(all -> {
      if (!all.containsKey(queue.name())) {
        return Future.succeededFuture(Optional.<QueueRecord>empty());
      }
      check(queue, all);
      return conn.preparedQuery(Sql.UPDATE_QUEUE).execute(params(queue))
          .map(rows -> Optional.of(QueueRecord.from(rows.iterator().next())));
    }));
  }

  /**
   * Deletes an empty queue (no child queue, no task or group that has not ended); false when there is none. Its
   * ended tasks and groups move to its parent.
   */
  public Future<Boolean> delete(String name) {
    if (QueueRecord.ROOT.equals(name)) {
      return Future.failedFuture(new Refused("name", "the root queue cannot be deleted", true));
    }
    return pool.withTransaction(conn -> lockAll(conn).compose(all -> {
      if (!all.containsKey(name)) {
        return Future.succeededFuture(false);
      }
      return conn.preparedQuery(Sql.QUEUE_CONTENTS).execute(Tuple.of(name)).compose(rows -> {
        Row row = rows.iterator().next();
        long children = row.getLong("children");
        long tasks = row.getLong("tasks");
        long groups = row.getLong("groups");
        if (children + tasks + groups > 0) {
          throw new Refused("name", "queue '" + name + "' is not empty: " + children + " child queue(s), " + tasks
              + " task(s) and " + groups + " group(s) that have not ended", true);
        }
        // what ended in the queue keeps its history under the parent (the rows must name a queue that exists)
        Tuple parent = Tuple.of(name, all.get(name).parent());
        return conn.preparedQuery(Sql.REHOME_ENDED_TASKS).execute(parent)
            .compose(v -> conn.preparedQuery(Sql.REHOME_ENDED_GROUPS).execute(parent))
            .compose(v -> conn.preparedQuery(Sql.DELETE_QUEUE).execute(Tuple.of(name)))
            .map(deleted -> deleted.rowCount() == 1);
      });
    }));
  }

  public Future<Map<String, Double>> gpuEquivalents() {
    return pool.query(Sql.GPU_EQUIVALENTS).execute().map(rows -> {
      Map<String, Double> factors = new LinkedHashMap<>();
      rows.forEach(row -> factors.put(row.getString("model"), row.getDouble("factor")));
      return factors;
    });
  }

  /** Replaces the whole table of card models to factors. */
  public Future<Void> setGpuEquivalents(Map<String, Double> factors) {
    return pool.withTransaction(conn -> conn.query(Sql.CLEAR_GPU_EQUIVALENTS).execute()
        .compose(v -> conn.preparedQuery(Sql.INSERT_GPU_EQUIVALENTS).execute(Tuple.tuple()
            .addArrayOfString(factors.keySet().toArray(new String[0]))
            .addArrayOfDouble(factors.values().toArray(new Double[0]))))
        .mapEmpty());
  }

  /**
   * Training borrow (SPEC §14): since when each idle queue has been idle (the borrow patrol keeps it), and in
   * GPU-equivalents what each queue's active training tasks hold on other queues' guarantees ({@code borrowed}, by
   * borrowing queue) and what each lender has lent ({@code lent}, by lender).
   */
  public record Borrowing(Map<String, Instant> idleSince, Map<String, Double> borrowed, Map<String, Double> lent) {
    public static final Borrowing NONE = new Borrowing(Map.of(), Map.of(), Map.of());
  }

  public Future<Borrowing> borrowing() {
    Future<RowSet<Row>> idle = pool.query(Sql.IDLE_QUEUES).execute();
    Future<RowSet<Row>> lending = pool.query(Sql.QUEUE_LENDING).execute();
    return Future.all(idle, lending).map(all -> {
      Map<String, Instant> since = new HashMap<>();
      idle.result().forEach(row -> since.put(row.getString("name"), row.getOffsetDateTime("idle_since").toInstant()));
      Map<String, Double> borrowed = new HashMap<>();
      Map<String, Double> lent = new HashMap<>();
      lending.result().forEach(row -> {
        borrowed.merge(row.getString("queue"), row.getDouble("gpu_eq"), Double::sum);
        lent.merge(row.getString("borrowed_from"), row.getDouble("gpu_eq"), Double::sum);
      });
      return new Borrowing(since, borrowed, lent);
    });
  }

  /** The borrow patrol's pass: idle_since started or cleared as each queue's own use crossed its guarantee. */
  public Future<Integer> markIdle() {
    return pool.query(Sql.MARK_IDLE_QUEUES).execute().map(RowSet::rowCount);
  }

  /** Pending training tasks waiting on their quota while some queue has been idle {@code idleSeconds}. */
  public Future<List<java.util.UUID>> trainingWaitingToBorrow(int idleSeconds) {
    return pool.preparedQuery(Sql.TRAINING_WAITING_TO_BORROW).execute(Tuple.of(idleSeconds)).map(rows -> {
      List<java.util.UUID> ids = new java.util.ArrayList<>();
      rows.forEach(row -> ids.add(row.getUUID("id")));
      return ids;
    });
  }

  /** Each queue's own live use (not its descendants'). */
  public Future<Map<String, Usage>> usage() {
    Future<RowSet<Row>> gpuEq = pool.query(Sql.QUEUE_USAGE).execute();
    Future<RowSet<Row>> counts = pool.query(Sql.QUEUE_COUNTS).execute();
    return Future.all(gpuEq, counts).map(all -> {
      Map<String, Double> used = new HashMap<>();
      gpuEq.result().forEach(row -> used.put(row.getString("queue"), row.getDouble("gpu_eq")));
      Map<String, Usage> usage = new HashMap<>();
      counts.result().forEach(row -> usage.put(row.getString("queue"), new Usage(used.getOrDefault(row.getString("queue"),
          0.0), row.getLong("active"), row.getLong("pending"), row.getLong("running"))));
      used.forEach((queue, eq) -> usage.putIfAbsent(queue, new Usage(eq, 0, 0)));
      return usage;
    });
  }

  private static Future<Map<String, QueueRecord>> lockAll(SqlConnection conn) {
    return conn.query(Sql.LOCK_QUEUES).execute().map(rows -> {
      Map<String, QueueRecord> all = new LinkedHashMap<>();
      records(rows).forEach(queue -> all.put(queue.name(), queue));
      return all;
    });
  }

  /** The tree's rules for {@code queue} among {@code all} (the locked rows, {@code queue}'s old self replaced). */
  static void check(QueueRecord queue, Map<String, QueueRecord> all) {
    if (QueueRecord.ROOT.equals(queue.name())) {
      if (queue.parent() != null) {
        throw new Refused("parent", "the root queue has no parent", false);
      }
      return;
    }
    QueueRecord parent = all.get(queue.parent());
    if (parent == null) {
      throw new Refused("parent", "no queue named '" + queue.parent() + "'", false);
    }
    for (String up = queue.parent(); up != null; up = all.containsKey(up) ? all.get(up).parent() : null) {
      if (up.equals(queue.name())) {
        throw new Refused("parent", "'" + queue.parent() + "' is below '" + queue.name() + "': a queue cannot be its own"
            + " ancestor", false);
      }
    }
    if (!QueueRecord.ROOT.equals(parent.name())) {
      double siblings = all.values().stream().filter(other -> parent.name().equals(other.parent())
          && !other.name().equals(queue.name())).mapToDouble(QueueRecord::guaranteed).sum();
      if (siblings + queue.guaranteed() > parent.guaranteed() + 1e-9) {
        throw new Refused("guaranteed", "the guarantees of '" + parent.name() + "''s children would be "
            + (siblings + queue.guaranteed()) + " GPU-eq, more than its own " + parent.guaranteed(), false);
      }
    }
    if (parent.maxGpuEq() != null && (queue.maxGpuEq() == null || queue.maxGpuEq() > parent.maxGpuEq())) {
      throw new Refused("max", "must be at most the parent's max (" + parent.maxGpuEq() + " GPU-eq)", false);
    }
    double children = all.values().stream().filter(child -> queue.name().equals(child.parent()))
        .mapToDouble(QueueRecord::guaranteed).sum();
    if (children > queue.guaranteed() + 1e-9) {
      throw new Refused("guaranteed", "its children are guaranteed " + children + " GPU-eq together", false);
    }
  }

  private static Tuple params(QueueRecord queue) {
    return Tuple.tuple().addString(queue.name()).addString(queue.parent()).addInteger(queue.weight())
        .addDouble(queue.guaranteed()).addDouble(queue.maxGpuEq()).addInteger(queue.maxCardsPerTask())
        .addInteger(queue.maxRunning()).addArrayOfString(queue.tenants().toArray(new String[0]));
  }

  private static List<QueueRecord> records(RowSet<Row> rows) {
    List<QueueRecord> queues = new ArrayList<>();
    rows.forEach(row -> queues.add(QueueRecord.from(row)));
    return queues;
  }
}
