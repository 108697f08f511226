package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.List;

/**
 * Every node's verdict for one task on a snapshot ({@link SchedulingPipeline#feasibility}): the nodes that
 * passed every filter, with their weighted scores, and why the others were refused, counted by reason. A task
 * group decides its members from these (SPEC §9) instead of taking each member's single best node.
 */
public final class Feasibility {
  private final TaskRequest task;
  private final List<NodeEvaluation> feasible = new ArrayList<>();
  private final List<NodeEvaluation> refused = new ArrayList<>();
  private final java.util.Map<String, Double> scores = new java.util.HashMap<>();
  private final int nodeCount;
  private List<NodeInfo> sortedFeasible;

  Feasibility(TaskRequest task, List<NodeEvaluation> evaluations, int nodeCount) {
    this.task = task;
    this.nodeCount = nodeCount;
    evaluations.forEach(evaluation -> (evaluation.feasible() ? feasible : refused).add(evaluation));
    feasible.forEach(evaluation -> scores.put(evaluation.node().id(), evaluation.score()));
  }

  public TaskRequest task() {
    return task;
  }

  /** The nodes that passed, best score first. */
  public List<NodeInfo> feasibleNodes() {
    if (sortedFeasible == null) {
      List<NodeEvaluation> sorted = new ArrayList<>(feasible);
      sorted.sort(NodeEvaluation.BEST_FIRST);
      sortedFeasible = sorted.stream().map(NodeEvaluation::node).toList();
    }
    return sortedFeasible;
  }

  /** The weighted score of a node that passed (0 for any other). */
  public double score(String nodeId) {
    return scores.getOrDefault(nodeId, 0.0);
  }

  public int feasibleCount() {
    return feasible.size();
  }

  public int nodeCount() {
    return nodeCount;
  }

  /** The code a task would get if no node passed (the furthest filter's), e.g. GPUTypeUnavailable. */
  public ReasonCode refusalCode() {
    return refusal().code();
  }

  /** The refused nodes counted by reason, in filter-chain order: "3 offline, 2 fewer than 8 free cards". */
  public String refusedReasons() {
    String explained = refusal().message();
    int colon = explained.indexOf(": ");
    return colon < 0 ? "" : explained.substring(colon + 2, explained.length() - 1);
  }

  private Decision refusal() {
    NodeRejections rejections = new NodeRejections();
    refused.forEach(rejections::add);
    return rejections.decision(nodeCount);
  }
}
