package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/**
 * The optional NormalizeScore step of a {@link ScorePlugin}: after it scored every feasible node, it may rescale
 * its own scores (e.g. to span [0, 100]) before they are clamped, weighted and summed. {@code scores[i]} is the
 * plugin's score of {@code feasible.get(i)}. A plugin set with a normalizing plugin is decided without the memo
 * (a node's normalized score depends on the other candidates).
 */
public interface NormalizeScorePlugin extends ScorePlugin {
  void normalizeScores(TaskRequest task, List<NodeInfo> feasible, double[] scores, CycleState state);
}
