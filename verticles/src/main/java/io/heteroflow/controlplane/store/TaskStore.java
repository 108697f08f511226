package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Tasks in PostgreSQL. Every status change is a CAS through {@link #transition}, which first asks the state
 * machine ({@link TaskStatus}) and, when a task leaves the active states, releases its cards in the same
 * transaction.
 */
public final class TaskStore {
  /** At most this many creates share one transaction. */
  private static final int MAX_CREATE_BATCH = 200;
  private final Pool pool;
  private final SelfFormingBatches<CreateRequest, Created> creates =
      new SelfFormingBatches<>(null, MAX_CREATE_BATCH, this::createAll);

  private final AgentReconciliations reconciliations;

  /** What one agent's heartbeat is answered with: its node's tasks to run or stop, and its orphans. */
  public record AgentView(List<TaskRecord> assigned, List<UUID> orphans) {}

  public TaskStore(Pool pool) {
    this.pool = pool;
    this.reconciliations = new AgentReconciliations(pool);
  }

  /** The outcome of a create: the task, and whether this call created it (false: an idempotent replay). */
  public record Created(TaskRecord task, boolean created, boolean keyReusedWithOtherBody) {
  }

  /** What a settling transition records besides the status (each may be null). */
  public record Details(Integer exitCode, String logTail, String reasonCode, String reasonMessage,
                        java.time.OffsetDateTime lastCheckpointAt) {
    public static final Details NONE = new Details(null, null, null, null);

    /** Details of a process that wrote no checkpoint. */
    public Details(Integer exitCode, String logTail, String reasonCode, String reasonMessage) {
      this(exitCode, logTail, reasonCode, reasonMessage, null);
    }
  }

  /**
   * Where a pass over the queue stands: the last task scanned (priority, created_at, id), and the newest
   * created_at the pass has scanned, so a task of higher priority created since then joins the next round
   * instead of waiting for the pass to end.
   */
  public record Cursor(int priority, OffsetDateTime createdAt, UUID id, OffsetDateTime newestSeen) {
  }

  private record CreateRequest(String tenant, TaskSpec spec, String idempotencyKey, String requestSha256) {
    Tuple params() {
      return Tuple.tuple().addUUID(UUID.randomUUID()).addString(tenant).addString(spec.name())
          .addString(spec.type()).addInteger(spec.priority()).addBoolean(spec.preemptible())
          .addInteger(spec.gpuRequired()).addLong(spec.gpuMemoryMb()).addString(spec.gpuType())
          .addValue(spec.toSpecJson()).addString(idempotencyKey).addString(requestSha256)
          .addDouble(spec.cpuCores()).addLong(spec.memoryMb()).addString(spec.queue());
    }
  }

  /**
   * Creates a task (or answers the one an earlier request with the same idempotency key created). Creates that
   * arrive together share one transaction, their statements pipelined: at a thousand submissions a second
   * that is a few dozen commits instead of a thousand. If the shared transaction fails, each create is
   * retried alone, so one bad request fails only itself.
   */
  public Future<Created> create(String tenant, TaskSpec spec, String idempotencyKey, String requestSha256) {
    return creates.submit(new CreateRequest(tenant, spec, idempotencyKey, requestSha256));
  }

  private Future<List<Future<Created>>> createAll(List<CreateRequest> requests) {
    Future<List<Created>> together = pool.withTransaction(conn -> createIn(conn, requests));
    return together.<List<Future<Created>>>map(all -> all.stream().map(Future::succeededFuture).toList())
        .recover(failure -> Future.succeededFuture(requests.size() == 1 ? List.of(Future.failedFuture(failure))
            : requests.stream().map(request -> pool.withTransaction(conn -> createIn(conn, List.of(request)))
                .map(created -> created.get(0))).toList()));
  }

  private Future<List<Created>> createIn(SqlConnection conn, List<CreateRequest> requests) {
    List<Future<RowSet<Row>>> inserts = requests.stream()
        .map(request -> conn.preparedQuery(Sql.INSERT_TASK).execute(request.params())).toList();
    return Future.all(inserts).compose(inserted -> {
      List<Future<Created>> created = new ArrayList<>();
      for (int i = 0; i < requests.size(); i++) {
        CreateRequest request = requests.get(i);
        RowSet<Row> rows = inserts.get(i).result();
        if (rows.size() == 1) {
          TaskRecord task = TaskRecord.from(rows.iterator().next());
          created.add(event(conn, task.id(), null, TaskStatus.PENDING, null, "created").map(new Created(task, true, false)));
        } else {
          created.add(conn.preparedQuery(Sql.TASK_BY_IDEMPOTENCY_KEY)
              .execute(Tuple.of(request.tenant(), request.idempotencyKey())).map(existing -> {
                Row row = existing.iterator().next();
                return new Created(TaskRecord.from(row), false,
                    !request.requestSha256().equals(row.getString("request_sha256")));
              }));
        }
      }
      return Future.all(created).map(all -> created.stream().map(Future::result).toList());
    });
  }

  public Future<Optional<TaskRecord>> get(UUID id) {
    return pool.preparedQuery(Sql.TASK_BY_ID).execute(Tuple.of(id)).map(TaskStore::first);
  }

  /** Newest first; {@code tenant} null for all tenants, {@code statuses} empty for every status. */
  public Future<List<TaskRecord>> list(String tenant, java.util.Collection<TaskStatus> statuses, int limit) {
    String[] wire = statuses.isEmpty() ? null : statuses.stream().map(TaskStatus::wire).toArray(String[]::new);
    return pool.preparedQuery(Sql.TASKS_FILTERED)
        .execute(Tuple.of(tenant, wire, limit))
        .map(TaskStore::all);
  }

  public Future<JsonArray> events(UUID id) {
    return pool.preparedQuery(Sql.TASK_EVENTS).execute(Tuple.of(id)).map(rows -> {
      JsonArray events = new JsonArray();
      for (Row row : rows) {
        events.add(new JsonObject().put("at", row.getOffsetDateTime("at").toString()).put("kind", row.getString("kind"))
            .put("from", row.getString("from_status")).put("to", row.getString("to_status"))
            .put("code", row.getString("code")).put("message", row.getString("message")));
      }
      return events;
    });
  }

  public Future<String> logTail(UUID id) {
    return pool.preparedQuery(Sql.TASK_LOG_TAIL).execute(Tuple.of(id))
        .map(rows -> rows.size() == 0 ? null : rows.iterator().next().getString("log_tail"));
  }

  /** Up to {@code limit} pending tasks in queue order, after {@code cursor} (from the head when null). */
  public Future<List<TaskRecord>> pending(Cursor cursor, int limit) {
    if (cursor == null) {
      return pool.preparedQuery(Sql.PENDING_FROM_START).execute(Tuple.of(limit)).map(TaskStore::all);
    }
    return pool.preparedQuery(Sql.PENDING_CONTINUE)
        .execute(Tuple.of(cursor.priority(), cursor.createdAt(), cursor.id(), limit, cursor.newestSeen()))
        .map(TaskStore::all);
  }

  /** Those of {@code ids} that are still pending (the immediate channel's tasks). */
  public Future<List<TaskRecord>> pendingAmong(List<UUID> ids) {
    if (ids.isEmpty()) {
      return Future.succeededFuture(List.of());
    }
    return pool.preparedQuery(Sql.PENDING_BY_IDS).execute(Tuple.of((Object) ids.toArray(new UUID[0])))
        .map(TaskStore::all);
  }

  /** Pending tasks counted by (reason code, priority band). */
  public Future<java.util.Map<List<String>, Long>> pendingByReasonAndBand() {
    return pool.query(Sql.PENDING_BY_REASON_AND_BAND).execute().map(rows -> {
      java.util.Map<List<String>, Long> counts = new java.util.HashMap<>();
      rows.forEach(row -> counts.put(List.of(row.getString("reason"), row.getString("band")), row.getLong("n")));
      return counts;
    });
  }

  /** A task preempting past its allowance: on which node, since when. */
  public record OverduePreemption(UUID id, String nodeId, OffsetDateTime since) {
  }

  /**
   * Tasks {@code preempting} for more than {@code seconds} plus what their stop may take beyond the default
   * (declared checkpoint timeout, termination grace above 10 s), oldest first.
   */
  public Future<List<OverduePreemption>> overduePreemptions(int seconds) {
    return pool.preparedQuery(Sql.OVERDUE_PREEMPTIONS).execute(Tuple.of((double) seconds)).map(rows -> {
      List<OverduePreemption> overdue = new ArrayList<>();
      rows.forEach(row -> overdue.add(new OverduePreemption(row.getUUID("id"), row.getString("node_id"),
          row.getOffsetDateTime("preempting_since"))));
      return overdue;
    });
  }

  /** Active tasks (running included) whose node has been offline longer than {@code graceSeconds}. */
  public Future<java.util.Map<UUID, TaskStatus>> stranded(int graceSeconds) {
    return pool.preparedQuery(Sql.STRANDED_TASKS).execute(Tuple.of((double) graceSeconds)).map(rows -> {
      java.util.Map<UUID, TaskStatus> stranded = new java.util.LinkedHashMap<>();
      rows.forEach(row -> stranded.put(row.getUUID("id"), TaskStatus.fromWire(row.getString("status"))));
      return stranded;
    });
  }

  /**
   * One heartbeat's reconciliation: the node's scheduled tasks (to run) and stopping or preempting ones (to stop), and
   * of the tasks its agent reports running those not active on the node; read together with those of the other
   * heartbeats arriving meanwhile (two statements per batch).
   */
  public Future<AgentView> forAgent(String nodeId, List<String> reported) {
    return reconciliations.read(nodeId, reported);
  }

  /**
   * CAS {@code from → to}. Refuses (failed future, {@link IllegalTransitionException}) what the state machine
   * does not declare; answers false when the task was not in {@code from} any more (someone else won).
   */
  public Future<Boolean> transition(UUID id, TaskStatus from, TaskStatus to, Details details) {
    if (!from.canBecome(to)) {
      return Future.failedFuture(new IllegalTransitionException(from, to));
    }
    if (to == TaskStatus.PENDING) {
      return requeue(id, from, details);
    }
    Tuple params = Tuple.tuple().addUUID(id).addString(from.wire()).addString(to.wire())
        .addInteger(details.exitCode()).addString(details.logTail()).addString(details.reasonCode())
        .addString(details.reasonMessage()).addOffsetDateTime(details.lastCheckpointAt());
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.CAS_STATUS).execute(params).compose(rows -> {
      if (rows.size() == 0) {
        return Future.succeededFuture(false);
      }
      String nodeId = rows.iterator().next().getString("node_id");
      Future<Void> released = from.isActive() && !to.isActive() ? release(conn, id, nodeId) : Future.succeededFuture();
      return released.compose(v -> event(conn, id, from, to, details.reasonCode(), details.reasonMessage()))
          .map(true);
    }));
  }

  private Future<Boolean> requeue(UUID id, TaskStatus from, Details details) {
    String code = details.reasonCode();
    String message = details.reasonMessage();
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.CAS_REQUEUE)
        .execute(Tuple.of(id, from.wire(), code, message, details.lastCheckpointAt())).compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(false);
          }
          String nodeId = rows.iterator().next().getString("node_id");
          Future<Void> released = from.isActive() ? release(conn, id, nodeId) : Future.succeededFuture();
          return released.compose(v -> event(conn, id, from, TaskStatus.PENDING, code, message)).map(true);
        }));
  }

  /**
   * Releases the task's active allocations and returns its cards, CPU and memory to the node, with a ledger
   * entry. Locks the node row before the allocation rows, the same order as a bind, so the two never deadlock.
   */
  private static Future<Void> release(SqlConnection conn, UUID id, String nodeId) {
    if (nodeId == null) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(Sql.LOCK_NODE).execute(Tuple.of(nodeId))
        .compose(locked -> conn.preparedQuery(Sql.RELEASE_ALLOCATIONS).execute(Tuple.of(id)))
        .compose(released -> conn.preparedQuery(Sql.TASK_DEMAND).execute(Tuple.of(id)).compose(demand -> {
          int wholeCards = 0;
          for (Row row : released) {
            wholeCards += "whole".equals(row.getString("kind")) ? 1 : 0;
          }
          Row task = demand.iterator().next();
          int cards = wholeCards;
          Future<?> returned = conn.preparedQuery(Sql.RETURN_ACCOUNTED)
              .execute(Tuple.of(nodeId, cards, task.getDouble("cpu_cores"), task.getLong("memory_mb")));
          return cards == 0 ? returned.mapEmpty() : returned.compose(v -> conn.preparedQuery(Sql.INSERT_LEDGER_ENTRY)
              .execute(Tuple.of(nodeId, id, -cards, "release"))).mapEmpty();
        }));
  }

  /** Records why a pending task is still pending; writes (and logs an event) only when the reason changed. */
  public Future<Void> setReason(UUID id, String code, String message) {
    return pool.preparedQuery(Sql.SET_REASON).execute(Tuple.of(id, code, message)).mapEmpty();
  }

  static Future<Void> event(SqlConnection conn, UUID id, TaskStatus from, TaskStatus to, String code, String message) {
    return conn.preparedQuery(Sql.INSERT_TRANSITION_EVENT)
        .execute(Tuple.of(id, from == null ? null : from.wire(), to.wire(), code, message)).mapEmpty();
  }

  private static Optional<TaskRecord> first(RowSet<Row> rows) {
    return rows.size() == 0 ? Optional.empty() : Optional.of(TaskRecord.from(rows.iterator().next()));
  }

  private static List<TaskRecord> all(RowSet<Row> rows) {
    List<TaskRecord> tasks = new ArrayList<>(rows.size());
    rows.forEach(row -> tasks.add(TaskRecord.from(row)));
    return tasks;
  }
}
