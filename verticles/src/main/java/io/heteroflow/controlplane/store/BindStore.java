package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.BindChecks.Occupant;
import io.heteroflow.controlplane.store.BindChecks.Rejected;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Bind (SPEC §2.2) of one task as one transaction: lock and re-check the node against live data, CAS-claim
 * the task pending → scheduled, re-check the picked cards (load, occupants, shard memory, tenant boundary),
 * persist the allocations (the partial unique index refuses a card already taken), account cards / CPU /
 * memory on the node (refused past its totals), give the task its master port (and an inference task a host
 * port), and write the ledger; the last statement stamps {@code scheduled_at} with the clock of that moment,
 * so the stamp includes the whole bind. Any failure rolls the whole transaction back: the task stays pending, nothing half-bound remains.
 * {@link BatchBindStore} binds a whole round the same way with set-based statements.
 */
public final class BindStore {
  private final Pool pool;
  private final BindChecks checks;

  public BindStore(Pool pool, SchedulerConfig config) {
    this.pool = pool;
    this.checks = new BindChecks(config);
  }

  /** One decided placement: whole cards by index, or a shard of one card. */
  public record Request(UUID taskId, String nodeId, List<Integer> gpuIndices, ShardAssignment shard) {
    public Request {
      gpuIndices = List.copyOf(gpuIndices);
    }
  }

  /**
   * The result of one bind attempt: bound (with its host port, if any, and its master port), or the reason it
   * was rolled back; {@code fenced} when the binder's leader term is no longer current (it must step down).
   */
  public record Outcome(boolean bound, Integer hostPort, Integer masterPort, ReasonCode code, String message,
                        boolean fenced) {
    /** A bind that was rolled back for {@code code}. */
    public static Outcome refused(ReasonCode code, String message) {
      return new Outcome(false, null, null, code, message, false);
    }

    /** True when another binder claimed the task first: back off silently. */
    public boolean lostClaim() {
      return code == ReasonCode.BindConflict && message == null;
    }
  }

  public Future<Outcome> bind(UUID taskId, String nodeId, List<Integer> gpuIndices) {
    return bind(new Request(taskId, nodeId, gpuIndices, null), null);
  }

  public Future<Outcome> bind(UUID taskId, String nodeId, List<Integer> gpuIndices, ShardAssignment shard,
                              LeaderStore.Fence fence) {
    return bind(new Request(taskId, nodeId, gpuIndices, shard), fence);
  }

  /**
   * Binds under the leader fence when one is given: the transaction first checks (and share-locks) the
   * leader row, so a member whose term has passed writes nothing.
   */
  public Future<Outcome> bind(Request request, LeaderStore.Fence fence) {
    UUID taskId = request.taskId();
    String nodeId = request.nodeId();
    ShardAssignment shard = request.shard();
    Integer[] indices = request.gpuIndices().toArray(new Integer[0]);
    JsonObject shardJson = shard == null ? null : shard.toWire().toJson();
    // Lock order: the node row first, then the task row. Claiming the task first would take a FOR KEY SHARE
    // lock on the node (the node_id foreign key) before FOR UPDATE, and two binders to one node deadlock.
    Long term = fence == null ? null : fence.term();
    return pool.withTransaction(conn -> LeaderStore.checkFence(conn, fence)
            .compose(v -> conn.preparedQuery(Sql.LOCK_NODE).execute(Tuple.of(nodeId)))
            .map(node -> {
              if (node.size() == 0) {
                throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is gone");
              }
              checks.node(nodeId, node.iterator().next());
              return null;
            })
            .compose(v -> conn.preparedQuery(Sql.CAS_BIND).execute(Tuple.tuple().addUUID(taskId).addString(nodeId)
                .addArrayOfInteger(indices).addInteger(null).addValue(shardJson).addLong(term)))
            .compose(claimed -> {
              if (claimed.size() == 0) {
                throw new Rejected(ReasonCode.BindConflict, null);
              }
              Row task = claimed.iterator().next();
              return recheckCards(conn, request, task.getString("tenant"))
                  .compose(v -> allocate(conn, request, task))
                  .compose(v -> withinQuota(conn, taskId, task.getString("queue")))
                  .compose(v -> choosePorts(conn, nodeId, "inference".equals(task.getString("type"))));
            })
            .compose(ports -> TaskStore.event(conn, taskId, TaskStatus.PENDING, TaskStatus.SCHEDULED, null,
                    BindChecks.boundMessage(nodeId, request.gpuIndices(), shard, ports.host()))
                // the last statement: the ports, and scheduled_at from the clock as the bind is about to commit
                .compose(v -> conn.preparedQuery(Sql.SET_PORTS_AND_STAMP)
                    .execute(Tuple.of(taskId, ports.host(), ports.master())))
                .map(new Outcome(true, ports.host(), ports.master(), null, null, false))))
        .recover(failure -> {
          Outcome refused = BindChecks.refusal(failure);
          return refused == null ? Future.failedFuture(failure) : Future.succeededFuture(refused);
        });
  }

  /** Its queues' limits, counted with the task's own allocations just written (QuotaCheck). */
  private static Future<Void> withinQuota(SqlConnection conn, UUID taskId, String queue) {
    return conn.preparedQuery(Sql.QUEUE_CHAINS).execute(Tuple.tuple().addArrayOfUUID(new UUID[] {taskId}))
        .compose(chains -> QuotaCheck.read(conn, chains)).map(quota -> {
          quota.verify(queue);
          return null;
        });
  }

  /** Load thresholds of every card the task will use, what already occupies them, and the tenant boundary. */
  private Future<Void> recheckCards(SqlConnection conn, Request request, String tenant) {
    String nodeId = request.nodeId();
    ShardAssignment shard = request.shard();
    List<Integer> touched = new ArrayList<>(request.gpuIndices());
    if (shard != null) {
      touched.add(shard.cardIndex());
    }
    if (touched.isEmpty()) {
      return Future.succeededFuture();
    }
    Integer[] indices = touched.toArray(new Integer[0]);
    Future<RowSet<Row>> cards = conn.preparedQuery(Sql.CARDS_OF_NODE_AT)
        .execute(Tuple.tuple().addString(nodeId).addArrayOfInteger(indices));
    Future<RowSet<Row>> occupants = cards.compose(v -> conn.preparedQuery(Sql.CARD_OCCUPANTS)
        .execute(Tuple.tuple().addString(nodeId).addArrayOfInteger(indices)));
    Future<RowSet<Row>> memberships = occupants.compose(v -> shard == null ? Future.succeededFuture(null)
        : conn.query(Sql.SHARE_MEMBERSHIPS).execute());
    return memberships.map(groups -> {
      if (cards.result().size() != indices.length) {
        throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " no longer reports those cards");
      }
      long cardMemoryMb = 0;
      for (Row card : cards.result()) {
        checks.card(nodeId, card);
        if (shard != null && card.getInteger("gpu_index") == shard.cardIndex()) {
          cardMemoryMb = card.getLong("memory_total_mb");
        }
      }
      List<Occupant> present = new ArrayList<>();
      occupants.result().forEach(row -> present.add(Occupant.of(row)));
      if (shard == null) {
        BindChecks.wholeCardFree(present);
      } else {
        checks.shard(nodeId, shard, tenant, cardMemoryMb, present, NodeStore.boundaryOf(groups));
      }
      return null;
    });
  }

  private static Future<Void> allocate(SqlConnection conn, Request request, Row task) {
    UUID taskId = request.taskId();
    String nodeId = request.nodeId();
    ShardAssignment shard = request.shard();
    String tenant = task.getString("tenant");
    List<Tuple> whole = new ArrayList<>();
    for (int index : request.gpuIndices()) {
      whole.add(Tuple.of(taskId, nodeId, index, tenant));
    }
    Future<?> allocated = shard != null
        ? conn.preparedQuery(Sql.INSERT_SHARD_ALLOCATION)
            .execute(Tuple.of(taskId, nodeId, shard.cardIndex(), shard.memoryMb(), tenant))
        : whole.isEmpty() ? Future.succeededFuture() : conn.preparedQuery(Sql.INSERT_WHOLE_CARD_ALLOCATION).executeBatch(whole);
    int cards = request.gpuIndices().size();
    return allocated
        .compose(v -> conn.preparedQuery(Sql.ADD_ACCOUNTED)
            .execute(Tuple.of(nodeId, cards, task.getDouble("cpu_cores"), task.getLong("memory_mb"))))
        .compose(updated -> {
          if (updated.size() == 0) {
            throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " cannot account " + cards
                + " more cards, " + task.getDouble("cpu_cores") + " CPU cores and " + task.getLong("memory_mb") + " MB");
          }
          return cards == 0 ? Future.succeededFuture()
              : conn.preparedQuery(Sql.INSERT_LEDGER_ENTRY).execute(Tuple.of(nodeId, taskId, cards, "bind"));
        })
        .mapEmpty();
  }

  /** A bound task's ports: its master port, and a host port for an inference task (else null). */
  private record Ports(Integer host, int master) {
  }

  /**
   * The lowest free master port on this node, and for an inference task the lowest free host port, each of its
   * configured range (the partial unique indexes back them).
   */
  private Future<Ports> choosePorts(SqlConnection conn, String nodeId, boolean inference) {
    return conn.preparedQuery(Sql.PORTS_IN_USE).execute(Tuple.of(nodeId)).map(rows -> {
      Set<Integer> used = new HashSet<>();
      rows.forEach(row -> {
        used.add(row.getInteger("host_port"));
        used.add(row.getInteger("master_port"));
      });
      return new Ports(inference ? checks.freePort(nodeId, used) : null, checks.freeMasterPort(nodeId, used));
    });
  }
}
