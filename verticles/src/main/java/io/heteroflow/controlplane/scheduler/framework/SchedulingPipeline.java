package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plain-Java scheduling of one task on a snapshot: the built-in filter chain (SPEC §2.1), the plugin filters,
 * the load thresholds on each node's last heartbeat ({@link LoadThresholdFilter}, last), PreScore, the weighted sum of the score plugins (plugin × node in parallel for large candidate sets),
 * PostScore, then Bind (whole cards) or the shard placement. Without PreScore / PostScore plugins the verdicts
 * and scores come from the snapshot's {@link DecisionMemo} (only nodes changed since a task of the same shape was
 * decided are judged again; same answers). No Vert.x, no database: the verticles, the benchmark and the trace
 * simulator all run this same code.
 */
public final class SchedulingPipeline {
  /** Below this many plugin × node evaluations scoring stays on the calling thread. */
  static final int PARALLEL_SCORING_THRESHOLD = 4096;

  private final List<FilterPlugin> builtInFilters;
  private final BindPlugin defaultBind;
  private final ShardPlacer shardPlacer;
  /** The load thresholds judged after every other filter; null: none (cards are picked whatever their load). */
  private final LoadThresholds limits;
  private final FilterPlugin loadFilter;

  public SchedulingPipeline(List<FilterPlugin> builtInFilters, BindPlugin defaultBind, ShardPlacer shardPlacer) {
    this(builtInFilters, defaultBind, shardPlacer, null);
  }

  public SchedulingPipeline(List<FilterPlugin> builtInFilters, BindPlugin defaultBind, ShardPlacer shardPlacer,
                            LoadThresholds limits) {
    this.builtInFilters = List.copyOf(builtInFilters);
    this.defaultBind = defaultBind;
    this.shardPlacer = shardPlacer;
    this.limits = limits;
    this.loadFilter = limits == null ? null : new LoadThresholdFilter(limits);
  }

  public Decision decide(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    List<FilterPlugin> filters = new ArrayList<>(builtInFilters);
    filters.addAll(plugins.filters());
    if (loadFilter != null) {
      filters.add(loadFilter);
    }
    if (plugins.preScores().isEmpty() && plugins.postScores().isEmpty()) {
      return decideMemoized(task, snapshot, plugins, filters);
    }
    Rejections rejections = new Rejections();
    List<NodeInfo> feasible = new ArrayList<>();
    for (NodeInfo node : snapshot.nodeViews()) {
      NodeEvaluation verdict = filter(task, node, snapshot, filters);
      if (verdict.feasible()) {
        feasible.add(node);
      } else {
        rejections.add(verdict);
      }
    }
    if (feasible.isEmpty()) {
      return rejections.decision(snapshot.size());
    }
    plugins.preScores().forEach(plugin -> plugin.preScore(task, feasible));
    Map<String, Double> totals = score(task, feasible, plugins);
    plugins.postScores().forEach(plugin -> plugin.postScore(task, totals));
    NodeInfo best = null;
    double bestScore = Double.NEGATIVE_INFINITY;
    for (NodeInfo node : feasible) {
      double score = totals.get(node.id());
      if (score > bestScore || (score == bestScore && node.id().compareTo(best.id()) < 0)) {
        best = node;
        bestScore = score;
      }
    }
    return place(task, best, bestScore, snapshot, plugins);
  }

  /** The same decision from the snapshot's memo: only nodes changed since this shape was last decided are judged. */
  private Decision decideMemoized(TaskRequest task, Snapshot snapshot, PluginSet plugins, List<FilterPlugin> filters) {
    DecisionMemo.Shape shape = snapshot.memo(plugins).shape(task, snapshot, node -> {
      NodeEvaluation verdict = filter(task, node, snapshot, filters);
      return verdict.feasible() ? new NodeEvaluation(node, verdict.verdict(), verdict.stage(),
          weightedScore(task, node, plugins)) : verdict;
    });
    NodeEvaluation best = shape.best();
    if (best == null) {
      Rejections rejections = new Rejections();
      snapshot.nodeViews().forEach(node -> rejections.add(shape.of(node.id())));
      return rejections.decision(snapshot.size());
    }
    return place(task, best.node(), best.score(), snapshot, plugins);
  }

  private static NodeEvaluation filter(TaskRequest task, NodeInfo node, Snapshot snapshot, List<FilterPlugin> filters) {
    Status verdict = Status.ok();
    int stage = 0;
    for (; stage < filters.size() && verdict.isOk(); stage++) {
      verdict = filters.get(stage).filter(task, node, snapshot);
    }
    return new NodeEvaluation(node, verdict, stage, 0);
  }

  /** Bind (whole cards) or the shard placement on the chosen node, on its cards under the load thresholds. */
  private Decision place(TaskRequest task, NodeInfo chosen, double bestScore, Snapshot snapshot, PluginSet plugins) {
    NodeInfo best = limits == null ? chosen : limits.usable(chosen);
    if (task.isShard()) {
      ShardPlacer placer = plugins.shardPlacer() != null ? plugins.shardPlacer() : shardPlacer;
      ShardAssignment shard = placer.place(task, best, snapshot.boundary());
      return shard == null
          ? Decision.unschedulable(ReasonCode.ShardAllocationFailed, "node " + best.id() + " has no card for the shard")
          : Decision.placed(best.id(), List.of(), shard, bestScore);
    }
    BindPlugin bind = plugins.bind() != null ? plugins.bind() : defaultBind;
    List<Integer> cards = task.gpuRequired() == 0 ? List.of() : bind.pickCards(task, best);
    if (cards.size() != task.gpuRequired()) {
      return Decision.unschedulable(ReasonCode.InsufficientResources,
          "node " + best.id() + " passed the filters but " + bind.name() + " found no " + task.gpuRequired()
              + " free cards");
    }
    return Decision.placed(best.id(), cards, null, bestScore);
  }

  /**
   * Refusals counted by reason, listed in filter-chain order (then most frequent first, then by name), so the
   * message does not depend on node order; the furthest stage names the cause (the tenant boundary wins a tie).
   */
  private static final class Rejections {
    private final Map<String, int[]> byReason = new HashMap<>();
    private ReasonCode furthest;
    private int furthestStage = -1;

    void add(NodeEvaluation refused) {
      Status verdict = refused.verdict();
      int stage = refused.stage();
      byReason.computeIfAbsent(verdict.reason(), reason -> new int[] {stage, 0})[1]++;
      if (stage > furthestStage || (stage == furthestStage && verdict.code() == ReasonCode.NoTenantEligibleGPU)) {
        furthestStage = stage;
        furthest = verdict.code();
      }
    }

    Decision decision(int nodeCount) {
      Map<String, Integer> ordered = new LinkedHashMap<>();
      byReason.entrySet().stream()
          .sorted(Comparator.<Map.Entry<String, int[]>>comparingInt(entry -> entry.getValue()[0])
              .thenComparing(entry -> -entry.getValue()[1]).thenComparing(Map.Entry::getKey))
          .forEach(entry -> ordered.put(entry.getKey(), entry.getValue()[1]));
      return Decision.unschedulable(furthest == null ? ReasonCode.NoSchedulableNodes : furthest,
          explain(nodeCount, ordered));
    }
  }

  private static Map<String, Double> score(TaskRequest task, List<NodeInfo> feasible, PluginSet plugins) {
    boolean parallel = (long) feasible.size() * plugins.scores().size() >= PARALLEL_SCORING_THRESHOLD;
    Map<String, Double> totals = new HashMap<>();
    if (parallel) {
      feasible.parallelStream()
          .map(node -> Map.entry(node.id(), weightedScore(task, node, plugins)))
          .toList()
          .forEach(entry -> totals.put(entry.getKey(), entry.getValue()));
    } else {
      feasible.forEach(node -> totals.put(node.id(), weightedScore(task, node, plugins)));
    }
    return totals;
  }

  private static double weightedScore(TaskRequest task, NodeInfo node, PluginSet plugins) {
    double total = 0;
    for (PluginSet.WeightedScore weighted : plugins.scores()) {
      double score = Math.max(0, Math.min(100, weighted.plugin().score(task, node)));
      total += weighted.weight() * score;
    }
    return total;
  }

  /** "0/10 nodes are available: 2 offline, 3 not nvidia, 5 fewer than 4 free cards." */
  static String explain(int nodeCount, Map<String, Integer> rejections) {
    if (nodeCount == 0) {
      return "0/0 nodes are available: no node has registered yet.";
    }
    StringBuilder message = new StringBuilder("0/").append(nodeCount).append(" nodes are available");
    String separator = ": ";
    for (Map.Entry<String, Integer> rejection : rejections.entrySet()) {
      message.append(separator).append(rejection.getValue()).append(' ').append(rejection.getKey());
      separator = ", ";
    }
    return message.append('.').toString();
  }
}
