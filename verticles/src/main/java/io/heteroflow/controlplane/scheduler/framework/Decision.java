package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.UUID;

/**
 * The outcome of the pipeline for one task: a node and its cards (or shard), or a reason with counts — and, when
 * a PostFilter plugin nominated one for an unschedulable task, the node it nominated (preemption's plan), the
 * tasks to preempt there (empty for a nomination made in an earlier round) and the plan in words.
 */
public record Decision(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score, ReasonCode code,
                       String message, String nominatedNodeId, List<UUID> victims, String plan) {

  public static Decision placed(String nodeId, List<Integer> gpuIndices, ShardAssignment shard, double score) {
    return new Decision(nodeId, List.copyOf(gpuIndices), shard, score, null, null, null, List.of(), null);
  }

  public static Decision unschedulable(ReasonCode code, String message) {
    return new Decision(null, List.of(), null, 0, code, message, null, List.of(), null);
  }

  /** This unschedulable decision with what a PostFilter plugin nominated. */
  public Decision nominating(PostFilterPlugin.Result nomination) {
    return new Decision(null, List.of(), null, 0, code, message, nomination.nominatedNodeId(),
        List.copyOf(nomination.victims()), nomination.message());
  }

  public boolean isPlaced() {
    return nodeId != null;
  }

  public boolean nominates() {
    return nominatedNodeId != null;
  }
}
