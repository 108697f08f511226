package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plan.Ending;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The replayed cluster: the scheduler's snapshot, what runs on each node, and each queue's use. A placement is
 * staged on the snapshot by the pipeline's caller ({@link Snapshot#assume}); a departure rebuilds the node from its
 * empty view with what still runs there (the same cards and shards) and replaces it on the snapshot, as a node read
 * again from PostgreSQL would be.
 */
final class ReplayCluster {
  /** One member on its node, with the decision that put it there. */
  record Placement(TaskRequest task, Decision decision) {
  }

  /** A started job: when it started and where its members run. */
  record Started(ReplayWorkload.Job job, long start, List<Placement> placements) {
    long end() {
      return start + job.runtime();
    }
  }

  private final Snapshot snapshot;
  private final Map<String, NodeInfo> empty = new LinkedHashMap<>();
  private final Map<String, List<Placement>> onNode = new HashMap<>();
  private final Map<java.util.UUID, Started> running = new LinkedHashMap<>();
  private final Map<String, FairShare.Amount> use = new HashMap<>();
  private final FairShare.Amount total;
  private final long capacityMilli;
  private long allocatedMilli;

  ReplayCluster(List<NodeInfo> nodes) {
    this.snapshot = new Snapshot(nodes);
    nodes.forEach(node -> empty.put(node.id(), node));
    double cards = nodes.stream().mapToInt(NodeInfo::gpuTotal).sum();
    this.total = new FairShare.Amount(cards, nodes.stream().mapToDouble(NodeInfo::cpuCores).sum(),
        nodes.stream().mapToDouble(node -> node.memoryTotalGb() * 1024).sum());
    this.capacityMilli = (long) cards * Trace.CARD_UNITS;
  }

  Snapshot snapshot() {
    return snapshot;
  }

  FairShare.Amount total() {
    return total;
  }

  Map<String, FairShare.Amount> use() {
    return use;
  }

  double utilisation() {
    return capacityMilli == 0 ? 0 : (double) allocatedMilli / capacityMilli;
  }

  int runningJobs() {
    return running.size();
  }

  /** Records a job whose members the snapshot has already staged. */
  Started started(ReplayWorkload.Job job, long now, List<Placement> placements) {
    Started started = new Started(job, now, List.copyOf(placements));
    running.put(job.id(), started);
    placements.forEach(p -> onNode.computeIfAbsent(p.decision().nodeId(), k -> new ArrayList<>()).add(p));
    allocatedMilli += job.gpuMilli();
    use.merge(job.queue(), job.demand(), FairShare.Amount::plus);
    return started;
  }

  /** The job ends: what its members hold is free again on the snapshot. */
  void departed(Started started) {
    running.remove(started.job().id());
    allocatedMilli -= started.job().gpuMilli();
    FairShare.Amount demand = started.job().demand();
    use.merge(started.job().queue(), new FairShare.Amount(-demand.gpuEq(), -demand.cpuCores(), -demand.memoryMb()),
        FairShare.Amount::plus);
    java.util.Set<String> touched = new java.util.TreeSet<>();
    for (Placement placement : started.placements()) {
      String nodeId = placement.decision().nodeId();
      onNode.get(nodeId).remove(placement);
      touched.add(nodeId);
    }
    for (String nodeId : touched) {
      NodeInfo node = empty.get(nodeId);
      for (Placement still : onNode.get(nodeId)) {
        node = node.withBound(still.task(), still.decision().gpuIndices(), still.decision().shard());
      }
      snapshot.replace(node);
    }
  }

  /** What each running member frees, and when (its start plus its real runtime): the timeline's input. */
  List<Ending> endings() {
    List<Ending> endings = new ArrayList<>();
    for (Started started : running.values()) {
      Instant at = Instant.ofEpochSecond(started.end());
      for (Placement p : started.placements()) {
        endings.add(new Ending(p.decision().nodeId(), at, p.decision().gpuIndices(),
            p.decision().shard() == null ? null : p.decision().shard().cardIndex(), p.task().cpuCores(),
            p.task().memoryMb()));
      }
    }
    return endings;
  }

  /**
   * A cheap necessary condition for {@code task} to start now: some node has its whole cards unallocated (any
   * model), its CPU and its memory free. False means no node can take it; true decides nothing.
   */
  boolean mightFit(TaskRequest task) {
    for (NodeInfo node : snapshot.nodeViews()) {
      if (node.gpuTotal() - node.gpuUsed() >= task.gpuRequired() && node.cpuFree() + 1e-9 >= task.cpuCores()
          && node.memoryFreeMb() >= task.memoryMb()) {
        return true;
      }
    }
    return false;
  }

  /** Whether the fleet has as many unallocated whole cards in all as the gang's members ask for together. */
  boolean mightFitGang(List<TaskRequest> members) {
    long free = 0;
    for (NodeInfo node : snapshot.nodeViews()) {
      free += Math.max(0, node.gpuTotal() - node.gpuUsed());
    }
    return free >= members.stream().mapToLong(TaskRequest::gpuRequired).sum();
  }
}
