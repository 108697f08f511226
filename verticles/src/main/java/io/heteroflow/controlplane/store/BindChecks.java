package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Row;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The re-checks a bind makes against live, locked rows before it writes (SPEC §2.2), shared by the single
 * bind and the batch bind: node status and load, each picked card's load, what already occupies a card,
 * a shard's memory and the tenant boundary. A failed check throws {@link Rejected}; the caller rolls back.
 */
final class BindChecks {
  private static final String UNIQUE_VIOLATION = "23505";
  private static final String CHECK_VIOLATION = "23514";
  private static final String DEADLOCK = "40P01";

  /** A refused bind: its reason code and message (a null message on BindConflict means a lost claim). */
  static final class Rejected extends RuntimeException {
    final ReasonCode code;

    Rejected(ReasonCode code, String message) {
      super(message, null, false, false);
      this.code = code;
    }

    BindStore.Outcome outcome() {
      return BindStore.Outcome.refused(code, getMessage());
    }
  }

  /** Something already holding a card: a whole-card task or a shard of {@code memoryMb}, and its tenant. */
  record Occupant(String kind, long memoryMb, String tenant) {
    static Occupant of(Row row) {
      return new Occupant(row.getString("kind"), row.getLong("memory_mb"), row.getString("tenant"));
    }
  }

  private final SchedulerConfig config;

  BindChecks(SchedulerConfig config) {
    this.config = config;
  }

  /** The locked node row is online (or busy), not cordoned, executable and under the CPU / memory load thresholds. */
  void node(String nodeId, Row node) {
    LoadThresholds limits = config.loadThresholds();
    String status = node.getString("status");
    if (!("online".equals(status) || "busy".equals(status)) || !node.getBoolean("executable")) {
      throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is " + status);
    }
    if (node.getBoolean("cordoned")) {
      throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is cordoned");
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
  }

  /** A picked card is under the GPU memory, utilisation and temperature thresholds. */
  void card(String nodeId, Row card) {
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

  /** A whole card must be empty. */
  static void wholeCardFree(List<Occupant> occupants) {
    if (!occupants.isEmpty()) {
      throw new Rejected(ReasonCode.BindConflict, "a picked card is no longer free");
    }
  }

  /** A shard fits the card's memory left for shards, the card holds no whole-card task, and the tenants share. */
  void shard(String nodeId, ShardAssignment shard, String tenant, long cardMemoryMb, List<Occupant> occupants,
             TenantBoundary boundary) {
    long shardMemory = 0;
    Set<String> tenants = new HashSet<>();
    for (Occupant occupant : occupants) {
      if ("whole".equals(occupant.kind())) {
        throw new Rejected(ReasonCode.ShardAllocationFailed, "card " + shard.cardIndex() + " of " + nodeId
            + " is held by a whole-card task");
      }
      shardMemory += occupant.memoryMb();
      tenants.add(occupant.tenant());
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

  /** The lowest port of the configured range not in {@code used}. */
  int freePort(String nodeId, Set<Integer> used) {
    return lowestFree(nodeId, used, config.portRangeStart(), config.portRangeEnd(), "host port");
  }

  /**
   * The lowest port of the master port range not in {@code used}: every task gets one at bind, its own
   * MASTER_PORT for torch.distributed (the range does not overlap the host ports').
   */
  int freeMasterPort(String nodeId, Set<Integer> used) {
    return lowestFree(nodeId, used, config.masterPortRangeStart(), config.masterPortRangeEnd(), "master port");
  }

  private static int lowestFree(String nodeId, Set<Integer> used, int start, int end, String what) {
    for (int port = start; port <= end; port++) {
      if (!used.contains(port)) {
        return port;
      }
    }
    throw new Rejected(ReasonCode.PortsExhausted, "node " + nodeId + " has no free " + what + " in " + start + "-" + end);
  }

  /** The rolled-back outcome a failure stands for; null for an unexpected failure (e.g. database down). */
  static BindStore.Outcome refusal(Throwable failure) {
    if (failure instanceof Rejected rejected) {
      return rejected.outcome();
    }
    if (failure instanceof LeaderStore.NotLeaderException notLeader) {
      return new BindStore.Outcome(false, null, null, null, notLeader.getMessage(), true);
    }
    if (failure instanceof PgException pg && UNIQUE_VIOLATION.equals(pg.getSqlState())) {
      return BindStore.Outcome.refused(ReasonCode.BindConflict, "a picked card or port was taken by another bind");
    }
    if (failure instanceof PgException pg && DEADLOCK.equals(pg.getSqlState())) {
      return BindStore.Outcome.refused(ReasonCode.BindConflict,
          "a concurrent transaction held the node; retried next round");
    }
    if (failure instanceof PgException pg && CHECK_VIOLATION.equals(pg.getSqlState())) {
      return BindStore.Outcome.refused(ReasonCode.InsufficientResources,
          "node capacity constraint: " + pg.getErrorMessage());
    }
    return null;
  }

  /** The transition event's message: where the task went. */
  static String boundMessage(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, Integer port) {
    return "bound to " + nodeId + (shard == null ? " cards " + gpuIndices
        : " shard of card " + shard.cardIndex() + " (" + shard.memoryMb() + " MB)")
        + (port == null ? "" : " port " + port);
  }
}
