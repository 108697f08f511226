package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/**
 * The outcome of the pipeline for one task: a node and its cards (or shard), or a reason with counts — and, when
 * a PostFilter plugin nominated one for an unschedulable task, the node it nominated (preemption's plan).
 */
public record Decision(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score, ReasonCode code,
                       String message, String nominatedNodeId) {

  public static Decision placed(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score) {
    return new Decision(nodeId, List.copyOf(gpuIndices), shard, score, null, null, null);
  }

  public static Decision unschedulable(ReasonCode code, String message) {
    return new Decision(null, List.of(), null, 0, code, message, null);
  }

  /** This unschedulable decision with the node a PostFilter plugin nominated. */
  public Decision nominating(String nodeId) {
    return new Decision(null, List.of(), null, 0, code, message, nodeId);
  }

  public boolean isPlaced() {
    return nodeId != null;
  }
}
