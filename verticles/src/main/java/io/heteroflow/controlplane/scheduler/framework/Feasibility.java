package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every node's verdict for one task on a snapshot ({@link SchedulingPipeline#feasibility}): the nodes that
 * passed every filter, best score first, with their weighted scores, and why the others were refused, counted by
 * reason. A task group decides its members from these (SPEC §9) instead of taking each member's single best node.
 * Built from the decision memo it is a view of the memo's evaluations: nothing is judged, copied or sorted again.
 */
public final class Feasibility {
  private final TaskRequest task;
  private final java.util.function.Supplier<List<NodeEvaluation>> feasibleBestFirst;
  private final int feasibleCount;
  private final Function<String, NodeEvaluation> byNode;
  private final Collection<NodeEvaluation> all;
  private final int nodeCount;
  private List<NodeInfo> feasibleNodes;

  private Feasibility(TaskRequest task, java.util.function.Supplier<List<NodeEvaluation>> feasibleBestFirst,
                      int feasibleCount, Function<String, NodeEvaluation> byNode, Collection<NodeEvaluation> all,
                      int nodeCount) {
    this.task = task;
    this.feasibleBestFirst = feasibleBestFirst;
    this.feasibleCount = feasibleCount;
    this.byNode = byNode;
    this.all = all;
    this.nodeCount = nodeCount;
  }

  /** From evaluations judged for this call. */
  static Feasibility of(TaskRequest task, List<NodeEvaluation> evaluations, int nodeCount) {
    List<NodeEvaluation> feasible = new ArrayList<>();
    Map<String, NodeEvaluation> byNode = new HashMap<>();
    for (NodeEvaluation evaluation : evaluations) {
      byNode.put(evaluation.node().id(), evaluation);
      if (evaluation.feasible()) {
        feasible.add(evaluation);
      }
    }
    feasible.sort(NodeEvaluation.BEST_FIRST);
    return new Feasibility(task, () -> feasible, feasible.size(), byNode::get, evaluations, nodeCount);
  }

  /** From the decision memo's evaluations of the task's shape (kept current with the snapshot). */
  static Feasibility of(TaskRequest task, DecisionMemo.Shape shape, int nodeCount) {
    return new Feasibility(task, shape::feasibleBestFirst, shape.feasibleCount(), shape::of, shape.all(), nodeCount);
  }

  public TaskRequest task() {
    return task;
  }

  /** The nodes that passed, best score first (as they were judged; the snapshot may have staged more since). */
  public List<NodeInfo> feasibleNodes() {
    if (feasibleNodes == null) {
      feasibleNodes = feasibleBestFirst.get().stream().map(NodeEvaluation::node).toList();
    }
    return feasibleNodes;
  }

  /** The weighted score of a node that passed (0 for any other). */
  public double score(String nodeId) {
    NodeEvaluation evaluation = byNode.apply(nodeId);
    return evaluation != null && evaluation.feasible() ? evaluation.score() : 0;
  }

  /** Whether the node passed every filter when judged. */
  public boolean passes(String nodeId) {
    NodeEvaluation evaluation = byNode.apply(nodeId);
    return evaluation != null && evaluation.feasible();
  }

  /** What freeing capacity can cure: a node refused only for these could take the task once enough ends there. */
  public static final java.util.Set<ReasonCode> CAPACITY = java.util.EnumSet.of(ReasonCode.InsufficientResources,
      ReasonCode.Reserved, ReasonCode.ShardAllocationFailed, ReasonCode.PortsExhausted,
      ReasonCode.LoadThresholdExceeded);

  /**
   * The nodes that could take the task once enough of what runs there ends (SPEC §13), best first: those that
   * passed, then those refused only for capacity whose cards (of its allowed models), CPU and memory are enough
   * in total.
   */
  public List<String> eligibleOnceFreed() {
    List<String> eligible = new ArrayList<>();
    feasibleNodes().forEach(node -> eligible.add(node.id()));
    all.stream().filter(evaluation -> !evaluation.feasible() && CAPACITY.contains(evaluation.verdict().code()))
        .map(NodeEvaluation::node).filter(this::largeEnough).map(NodeInfo::id).sorted().forEach(eligible::add);
    return eligible;
  }

  private boolean largeEnough(NodeInfo node) {
    long cards = node.cards().stream().filter(card -> NodeInfo.allows(task.gpuModels(), card)).count();
    return cards >= task.plannedCards() && node.cpuCores() + 1e-9 >= task.cpuCores()
        && node.memoryTotalGb() * 1024 >= task.memoryMb();
  }

  public int feasibleCount() {
    return feasibleCount;
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
    all.stream().filter(evaluation -> !evaluation.feasible()).forEach(rejections::add);
    return rejections.decision(nodeCount);
  }
}
