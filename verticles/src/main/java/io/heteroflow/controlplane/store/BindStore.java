package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.registry.AgentMessages;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
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
 * Bind (SPEC §2.2) as one transaction: lock and re-check the node against live data, CAS-claim the task
 * pending → scheduled, re-check the picked cards (load, occupants, shard memory, tenant boundary), persist the
 * allocations (the partial unique index refuses a card already taken), account cards / CPU / memory on the
 * node (refused past its totals), give an inference task a host port, and write the ledger. Any failure rolls
 * the whole transaction back: the task stays pending, nothing half-bound remains.
 */
public final class BindStore {
  private static final String UNIQUE_VIOLATION = "23505";
  private static final String CHECK_VIOLATION = "23514";
  private static final String DEADLOCK = "40P01";

  private final Pool pool;
  private final SchedulerConfig config;

  public BindStore(Pool pool, SchedulerConfig config) {
    this.pool = pool;
    this.config = config;
  }

  /**
   * The result of one bind attempt: bound (with its host port, if any), or the reason it was rolled back;
   * {@code fenced} when the binder's leader term is no longer current (it must step down).
   */
  public record Outcome(boolean bound, Integer hostPort, ReasonCode code, String message, boolean fenced) {
    /** True when another binder claimed the task first: back off silently. */
    public boolean lostClaim() {
      return code == ReasonCode.BindConflict && message == null;
    }
  }

  private static final class Rejected extends RuntimeException {
    final ReasonCode code;

    Rejected(ReasonCode code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  public Future<Outcome> bind(UUID taskId, String nodeId, List<Integer> gpuIndices) {
    return bind(taskId, nodeId, gpuIndices, null, null);
  }

  /**
   * Binds under the leader fence when one is given: the transaction first checks (and share-locks) the
   * leader row, so a member whose term has passed writes nothing.
   */
  public Future<Outcome> bind(UUID taskId, String nodeId, List<Integer> gpuIndices, ShardAssignment shard,
                              LeaderStore.Fence fence) {
    Integer[] indices = gpuIndices.toArray(new Integer[0]);
    JsonObject shardJson = AgentMessages.shard(shard);
    // Lock order: the node row first, then the task row. Claiming the task first would take a FOR KEY SHARE
    // lock on the node (the node_id foreign key) before FOR UPDATE, and two binders to one node deadlock.
    Long term = fence == null ? null : fence.term();
    return pool.withTransaction(conn -> LeaderStore.checkFence(conn, fence)
            .compose(v -> recheckNode(conn, nodeId))
            .compose(v -> conn.preparedQuery(Sql.CAS_BIND).execute(Tuple.tuple().addUUID(taskId).addString(nodeId)
                .addArrayOfInteger(indices).addInteger(null).addValue(shardJson).addLong(term)))
            .compose(claimed -> {
              if (claimed.size() == 0) {
                throw new Rejected(ReasonCode.BindConflict, null);
              }
              Row task = claimed.iterator().next();
              return recheckCards(conn, nodeId, gpuIndices, shard, task.getString("tenant"))
                  .compose(v -> allocate(conn, taskId, nodeId, gpuIndices, shard, task))
                  .compose(v -> "inference".equals(task.getString("type"))
                      ? assignPort(conn, taskId, nodeId) : Future.succeededFuture((Integer) null));
            })
            .compose(port -> TaskStore.event(conn, taskId, TaskStatus.PENDING, TaskStatus.SCHEDULED, null,
                    "bound to " + nodeId + (shard == null ? " cards " + gpuIndices
                        : " shard of card " + shard.cardIndex() + " (" + shard.memoryMb() + " MB)")
                        + (port == null ? "" : " port " + port))
                .map(new Outcome(true, port, null, null, false))))
        .recover(failure -> {
          Outcome refused = refusal(failure);
          return refused == null ? Future.failedFuture(failure) : Future.succeededFuture(refused);
        });
  }

  /** Locks the node row and re-checks it against live data: status and load thresholds. */
  private Future<Void> recheckNode(SqlConnection conn, String nodeId) {
    LoadThresholds limits = config.loadThresholds();
    return conn.preparedQuery(Sql.LOCK_NODE).execute(Tuple.of(nodeId)).map(rows -> {
      if (rows.size() == 0) {
        throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is gone");
      }
      Row node = rows.iterator().next();
      String status = node.getString("status");
      if (!("online".equals(status) || "busy".equals(status)) || !node.getBoolean("executable")) {
        throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is " + status);
      }
      if (node.getDouble("cpu_percent") >= limits.cpuPercent()) {
        throw new Rejected(ReasonCode.LoadThresholdExceeded, "node " + nodeId + " CPU at "
            + Math.round(node.getDouble("cpu_percent")) + " % (limit " + Math.round(limits.cpuPercent()) + " %)");
      }
      double memoryTotalMb = node.getDouble("memory_total_gb") * 1024;
      if (memoryTotalMb > 0 && 100.0 * node.getLong("memory_used_mb") / memoryTotalMb >= limits.memoryPercent()) {
        throw new Rejected(ReasonCode.LoadThresholdExceeded, "node " + nodeId + " memory above "
            + Math.round(limits.memoryPercent()) + " %");
      }
      return null;
    });
  }

  /** Load thresholds of every card the task will use, what already occupies them, and the tenant boundary. */
  private Future<Void> recheckCards(SqlConnection conn, String nodeId, List<Integer> gpuIndices, ShardAssignment shard,
                                    String tenant) {
    List<Integer> touched = new ArrayList<>(gpuIndices);
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
        recheckCard(nodeId, card);
        if (shard != null && card.getInteger("gpu_index") == shard.cardIndex()) {
          cardMemoryMb = card.getLong("memory_total_mb");
        }
      }
      if (shard == null) {
        if (occupants.result().size() > 0) {
          throw new Rejected(ReasonCode.BindConflict, "a picked card is no longer free");
        }
        return null;
      }
      recheckShard(nodeId, shard, tenant, cardMemoryMb, occupants.result(), NodeStore.boundaryOf(groups));
      return null;
    });
  }

  private void recheckShard(String nodeId, ShardAssignment shard, String tenant, long cardMemoryMb,
                            RowSet<Row> occupants, TenantBoundary boundary) {
    long shardMemory = 0;
    Set<String> tenants = new HashSet<>();
    for (Row occupant : occupants) {
      if ("whole".equals(occupant.getString("kind"))) {
        throw new Rejected(ReasonCode.ShardAllocationFailed, "card " + shard.cardIndex() + " of " + nodeId
            + " is held by a whole-card task");
      }
      shardMemory += occupant.getLong("memory_mb");
      tenants.add(occupant.getString("tenant"));
    }
    long capacity = cardMemoryMb - config.reserveMb(cardMemoryMb);
    if (shardMemory + shard.memoryMb() > capacity) {
      throw new Rejected(ReasonCode.ShardAllocationFailed, "card " + shard.cardIndex() + " of " + nodeId + " has "
          + Math.max(0, capacity - shardMemory) + " MB left for shards, " + shard.memoryMb() + " MB asked");
    }
    if (!boundary.mayJoin(tenant, tenants)) {
      throw new Rejected(ReasonCode.NoTenantEligibleGPU, "card " + shard.cardIndex() + " of " + nodeId
          + " is used by a tenant that does not share with " + tenant);
    }
  }

  private void recheckCard(String nodeId, Row card) {
    LoadThresholds limits = config.loadThresholds();
    long total = card.getLong("memory_total_mb");
    String which = "node " + nodeId + " card " + card.getInteger("gpu_index");
    if (total > 0 && 100.0 * card.getLong("memory_used_mb") / total >= limits.gpuMemoryPercent()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " GPU memory above "
          + Math.round(limits.gpuMemoryPercent()) + " %");
    }
    if (card.getInteger("utilization_percent") >= limits.gpuUtilizationPercent()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " utilisation above "
          + Math.round(limits.gpuUtilizationPercent()) + " %");
    }
    if (card.getInteger("temperature_c") >= limits.gpuTemperatureC()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " at " + card.getInteger("temperature_c")
          + " °C (limit " + limits.gpuTemperatureC() + " °C)");
    }
  }

  private static Future<Void> allocate(SqlConnection conn, UUID taskId, String nodeId, List<Integer> gpuIndices,
                                       ShardAssignment shard, Row task) {
    List<Tuple> whole = new ArrayList<>();
    for (int index : gpuIndices) {
      whole.add(Tuple.of(taskId, nodeId, index));
    }
    Future<?> allocated = shard != null
        ? conn.preparedQuery(Sql.INSERT_SHARD_ALLOCATION).execute(Tuple.of(taskId, nodeId, shard.cardIndex(), shard.memoryMb()))
        : whole.isEmpty() ? Future.succeededFuture() : conn.preparedQuery(Sql.INSERT_WHOLE_CARD_ALLOCATION).executeBatch(whole);
    int cards = gpuIndices.size();
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

  /** The lowest free host port of the configured range on this node (the partial unique index backs it). */
  private Future<Integer> assignPort(SqlConnection conn, UUID taskId, String nodeId) {
    return conn.preparedQuery(Sql.PORTS_IN_USE).execute(Tuple.of(nodeId)).compose(rows -> {
      Set<Integer> used = new HashSet<>();
      rows.forEach(row -> used.add(row.getInteger("host_port")));
      for (int port = config.portRangeStart(); port <= config.portRangeEnd(); port++) {
        if (!used.contains(port)) {
          int chosen = port;
          return conn.preparedQuery(Sql.SET_HOST_PORT).execute(Tuple.of(taskId, chosen)).map(chosen);
        }
      }
      throw new Rejected(ReasonCode.PortsExhausted, "node " + nodeId + " has no free port in "
          + config.portRangeStart() + "-" + config.portRangeEnd());
    });
  }

  /** The rolled-back outcome a failure stands for; null for an unexpected failure (e.g. database down). */
  private static Outcome refusal(Throwable failure) {
    if (failure instanceof Rejected rejected) {
      return new Outcome(false, null, rejected.code, rejected.getMessage(), false);
    }
    if (failure instanceof LeaderStore.NotLeaderException notLeader) {
      return new Outcome(false, null, null, notLeader.getMessage(), true);
    }
    if (failure instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState())) {
      return new Outcome(false, null, ReasonCode.BindConflict, "a picked card or port was taken by another bind", false);
    }
    if (failure instanceof PgException pg && DEADLOCK.equals(pg.getSqlState())) {
      return new Outcome(false, null, ReasonCode.BindConflict, "a concurrent transaction held the node; retried next round",
          false);
    }
    if (failure instanceof PgException pg && CHECK_VIOLATION.equals(pg.getSqlState())) {
      return new Outcome(false, null, ReasonCode.InsufficientResources, "node capacity constraint: " + pg.getErrorMessage(),
          false);
    }
    return null;
  }
}
