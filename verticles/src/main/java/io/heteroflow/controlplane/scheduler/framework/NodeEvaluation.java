package io.heteroflow.controlplane.scheduler.framework;

import java.util.Comparator;

/**
 * What the pipeline concluded about one node for one task: the verdict of the first filter that refused it (or
 * ok), how far through the filter chain it got, and the weighted score when it passed.
 */
record NodeEvaluation(NodeInfo node, Status verdict, int stage, double score) {
  /** Highest score first; equal scores by node id, so every path picks the same node. */
  static final Comparator<NodeEvaluation> BEST_FIRST = Comparator.comparingDouble(NodeEvaluation::score).reversed()
      .thenComparing(evaluation -> evaluation.node().id());

  boolean feasible() {
    return verdict.isOk();
  }
}
