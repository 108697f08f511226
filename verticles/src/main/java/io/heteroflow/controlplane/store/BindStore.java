package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Bind (SPEC §2.2) as one transaction: lock and re-check the node against live data, CAS-claim the task
 * pending → scheduled, re-check the picked cards, persist the card allocations (the partial unique index refuses a card already taken), add to
 * the node's {@code gpu_used} (refused past {@code gpu_total}) and write the ledger. Any failure rolls the
 * whole transaction back: the task stays pending, nothing half-bound remains.
 */
public final class BindStore {
  private static final String UNIQUE_VIOLATION = "23505";
  private static final String CHECK_VIOLATION = "23514";
  private static final String DEADLOCK = "40P01";

  private final Pool pool;
  private final LoadThresholds thresholds;

  public BindStore(Pool pool, LoadThresholds thresholds) {
    this.pool = pool;
    this.thresholds = thresholds;
  }

  /** The result of one bind attempt: bound, or the reason it was rolled back. */
  public record Outcome(boolean bound, ReasonCode code, String message) {
    static final Outcome BOUND = new Outcome(true, null, null);

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
    Integer[] indices = gpuIndices.toArray(new Integer[0]);
    // Lock order: the node row first, then the task row. Claiming the task first would take a FOR KEY SHARE
    // lock on the node (the node_id foreign key) before FOR UPDATE, and two binders to one node deadlock.
    return pool.withTransaction(conn -> recheckNode(conn, nodeId)
            .compose(v -> conn.preparedQuery(Sql.CAS_BIND)
                .execute(Tuple.tuple().addUUID(taskId).addString(nodeId).addArrayOfInteger(indices)))
            .compose(claimed -> {
              if (claimed.size() == 0) {
                throw new Rejected(ReasonCode.BindConflict, null);
              }
              return recheckCards(conn, nodeId, indices);
            })
            .compose(v -> allocate(conn, taskId, nodeId, gpuIndices))
            .compose(v -> TaskStore.event(conn, taskId, TaskStatus.PENDING, TaskStatus.SCHEDULED, null,
                "bound to " + nodeId + " cards " + gpuIndices))
            .map(Outcome.BOUND))
        .recover(failure -> {
          Outcome refused = refusal(failure);
          return refused == null ? Future.failedFuture(failure) : Future.succeededFuture(refused);
        });
  }

  /** Locks the node row and re-checks it against live data: status and load thresholds. */
  private Future<Void> recheckNode(SqlConnection conn, String nodeId) {
    return conn.preparedQuery(Sql.LOCK_NODE).execute(Tuple.of(nodeId)).map(rows -> {
      if (rows.size() == 0) {
        throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is gone");
      }
      Row node = rows.iterator().next();
      String status = node.getString("status");
      if (!("online".equals(status) || "busy".equals(status)) || !node.getBoolean("executable")) {
        throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is " + status);
      }
      if (node.getDouble("cpu_percent") >= thresholds.cpuPercent()) {
        throw new Rejected(ReasonCode.LoadThresholdExceeded, "node " + nodeId + " CPU at "
            + Math.round(node.getDouble("cpu_percent")) + " % (limit " + Math.round(thresholds.cpuPercent()) + " %)");
      }
      double memoryTotalMb = node.getDouble("memory_total_gb") * 1024;
      if (memoryTotalMb > 0 && 100.0 * node.getLong("memory_used_mb") / memoryTotalMb >= thresholds.memoryPercent()) {
        throw new Rejected(ReasonCode.LoadThresholdExceeded, "node " + nodeId + " memory above "
            + Math.round(thresholds.memoryPercent()) + " %");
      }
      return null;
    });
  }

  private Future<Void> recheckCards(SqlConnection conn, String nodeId, Integer[] indices) {
    if (indices.length == 0) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(Sql.CARDS_OF_NODE_AT)
        .execute(Tuple.tuple().addString(nodeId).addArrayOfInteger(indices)).map(cards -> {
          if (cards.size() != indices.length) {
            throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " no longer reports those cards");
          }
          for (Row card : cards) {
            recheckCard(nodeId, card);
          }
          return null;
        });
  }

  private void recheckCard(String nodeId, Row card) {
    long total = card.getLong("memory_total_mb");
    String which = "node " + nodeId + " card " + card.getInteger("gpu_index");
    if (total > 0 && 100.0 * card.getLong("memory_used_mb") / total >= thresholds.gpuMemoryPercent()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " GPU memory above "
          + Math.round(thresholds.gpuMemoryPercent()) + " %");
    }
    if (card.getInteger("utilization_percent") >= thresholds.gpuUtilizationPercent()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " utilisation above "
          + Math.round(thresholds.gpuUtilizationPercent()) + " %");
    }
    if (card.getInteger("temperature_c") >= thresholds.gpuTemperatureC()) {
      throw new Rejected(ReasonCode.LoadThresholdExceeded, which + " at " + card.getInteger("temperature_c")
          + " °C (limit " + thresholds.gpuTemperatureC() + " °C)");
    }
  }

  private static Future<Void> allocate(SqlConnection conn, UUID taskId, String nodeId, List<Integer> gpuIndices) {
    if (gpuIndices.isEmpty()) {
      return Future.succeededFuture();
    }
    List<Tuple> batch = new ArrayList<>();
    for (int index : gpuIndices) {
      batch.add(Tuple.of(taskId, nodeId, index));
    }
    int delta = gpuIndices.size();
    return conn.preparedQuery(Sql.INSERT_WHOLE_CARD_ALLOCATION).executeBatch(batch)
        .compose(v -> conn.preparedQuery(Sql.ADD_GPU_USED).execute(Tuple.of(nodeId, delta)))
        .compose(updated -> {
          if (updated.size() == 0) {
            throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " has fewer than " + delta
                + " unaccounted cards");
          }
          return conn.preparedQuery(Sql.INSERT_LEDGER_ENTRY).execute(Tuple.of(nodeId, taskId, delta, "bind"));
        })
        .mapEmpty();
  }

  /** The rolled-back outcome a failure stands for; null for an unexpected failure (e.g. database down). */
  private static Outcome refusal(Throwable failure) {
    if (failure instanceof Rejected rejected) {
      return new Outcome(false, rejected.code, rejected.getMessage());
    }
    if (failure instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState())) {
      return new Outcome(false, ReasonCode.BindConflict, "a picked card was taken by another bind");
    }
    if (failure instanceof PgException pg && DEADLOCK.equals(pg.getSqlState())) {
      return new Outcome(false, ReasonCode.BindConflict, "a concurrent transaction held the node; retried next round");
    }
    if (failure instanceof PgException pg && CHECK_VIOLATION.equals(pg.getSqlState())) {
      return new Outcome(false, ReasonCode.InsufficientResources, "node capacity constraint: " + pg.getErrorMessage());
    }
    return null;
  }
}
