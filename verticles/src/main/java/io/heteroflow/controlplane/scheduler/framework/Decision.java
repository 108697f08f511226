package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/** The outcome of the pipeline for one task: a node and its cards (or shard), or a reason with counts. */
public record Decision(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score, ReasonCode code,
                       String message) {

  public static Decision placed(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score) {
    return new Decision(nodeId, List.copyOf(gpuIndices), shard, score, null, null);
  }

  public static Decision unschedulable(ReasonCode code, String message) {
    return new Decision(null, List.of(), null, 0, code, message);
  }

  public boolean isPlaced() {
    return nodeId != null;
  }
}
