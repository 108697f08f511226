package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * Plain-Java scheduling of one task on a snapshot, through the extension points in order: PreFilter, Filter (the
 * locked built-in filters of SPEC §2.1 first, as registered, then the plugin filters, then the load thresholds on
 * each node's last heartbeat, {@link LoadThresholdFilter}), PostFilter when no node passed, PreScore, Score (the
 * weighted sum, plugin × node in parallel for large candidate sets, with NormalizeScore), Reserve, then Bind
 * (whole cards) or the shard placement. Each decision gets its own {@link CycleState}. When the set is
 * {@link PluginSet#memoizable(TaskRequest) memoizable} for the task the verdicts and scores come from the
 * snapshot's {@link DecisionMemo}
 * (only nodes changed since a task of the same shape was decided are judged again; same answers). No Vert.x, no
 * database: the verticles, the benchmark and the trace simulator all run this same code.
 */
public final class SchedulingPipeline {
  /** Below this many plugin × node evaluations scoring stays on the calling thread. */
  static final int PARALLEL_SCORING_THRESHOLD = 4096;

  private final BindPlugin defaultBind;
  private final ShardPlacer shardPlacer;
  /** The load thresholds judged after every other filter; null: none (cards are picked whatever their load). */
  private final LoadThresholds limits;
  private final FilterPlugin loadFilter;
  /** The filter chain of the last plugin set decided with (a round decides hundreds of tasks with one set). */
  private volatile FilterChain chain = new FilterChain(null, List.of());

  private record FilterChain(PluginSet plugins, List<FilterPlugin> filters) {
  }

  public SchedulingPipeline(BindPlugin defaultBind, ShardPlacer shardPlacer, LoadThresholds limits) {
    this.defaultBind = defaultBind;
    this.shardPlacer = shardPlacer;
    this.limits = limits;
    this.loadFilter = limits == null ? null : new LoadThresholdFilter(limits);
  }

  public Decision decide(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    CycleState state = new CycleState();
    List<FilterPlugin> filters = filters(plugins);
    for (PreFilterPlugin preFilter : plugins.preFilters()) {
      Status verdict = preFilter.preFilter(task, snapshot, state);
      if (!verdict.isOk()) {
        List<NodeEvaluation> refused = new ArrayList<>(snapshot.size());
        snapshot.nodeViews().forEach(node -> refused.add(new NodeEvaluation(node, verdict, 0, 0)));
        return unschedulable(task, snapshot, plugins, state, refused);
      }
    }
    if (plugins.memoizable(task)) {
      return decideMemoized(task, snapshot, plugins, filters, state);
    }
    List<NodeEvaluation> refused = new ArrayList<>();
    List<NodeInfo> feasible = new ArrayList<>();
    for (NodeInfo node : snapshot.nodeViews()) {
      NodeEvaluation verdict = filter(task, node, snapshot, filters, state);
      if (verdict.feasible()) {
        feasible.add(node);
      } else {
        refused.add(verdict);
      }
    }
    if (feasible.isEmpty()) {
      return unschedulable(task, snapshot, plugins, state, refused);
    }
    for (PreScorePlugin preScore : plugins.preScores()) {
      preScore.preScore(task, feasible, state);
    }
    double[] totals = score(task, feasible, plugins, state);
    NodeInfo best = null;
    double bestScore = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < totals.length; i++) {
      NodeInfo node = feasible.get(i);
      if (totals[i] > bestScore || (totals[i] == bestScore && node.id().compareTo(best.id()) < 0)) {
        best = node;
        bestScore = totals[i];
      }
    }
    return place(task, best, bestScore, snapshot, plugins, state);
  }

  /**
   * Every node's verdict for {@code task} on the snapshot as it stands, the feasible ones scored: how a group
   * member is judged (its group then chooses among them, {@link #placeOn}). No memo and no PostFilter: a group is
   * decided as a unit.
   */
  public Feasibility feasibility(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    // with reservations the task is judged itself, not by its shape (they depend on its id and queue time)
    return feasibility(task, snapshot, plugins, snapshot.reservations().all().isEmpty());
  }

  /**
   * The same judged by the task's shape wherever it can be (reservations are not judged, a reserved node passes
   * that filter): what could take the task once enough is free, for the reservation plan.
   */
  public Feasibility feasibilityOfShape(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    return feasibility(task, snapshot, plugins, true);
  }

  private Feasibility feasibility(TaskRequest task, Snapshot snapshot, PluginSet plugins, boolean byShape) {
    CycleState state = new CycleState();
    List<FilterPlugin> filters = filters(plugins);
    if (plugins.memoizable(task) && byShape) {
      // the same verdicts from the snapshot's memo: only nodes changed since this shape was judged are judged again
      TaskRequest shapeOnly = task.shape();
      DecisionMemo.Shape shape = snapshot.memo(plugins).shape(shapeOnly, snapshot,
          node -> evaluate(shapeOnly, node, snapshot, plugins, filters, state));
      return Feasibility.of(task, shape, snapshot.size());
    }
    List<NodeEvaluation> evaluations = new ArrayList<>(snapshot.size());
    for (PreFilterPlugin preFilter : plugins.preFilters()) {
      Status verdict = preFilter.preFilter(task, snapshot, state);
      if (!verdict.isOk()) {
        snapshot.nodeViews().forEach(node -> evaluations.add(new NodeEvaluation(node, verdict, 0, 0)));
        return Feasibility.of(task, evaluations, snapshot.size());
      }
    }
    for (NodeInfo node : snapshot.nodeViews()) {
      evaluations.add(evaluate(task, node, snapshot, plugins, filters, state));
    }
    return Feasibility.of(task, evaluations, snapshot.size());
  }

  /** Whether {@code node}, as the snapshot has it now, passes every filter for {@code task}. */
  public boolean passes(TaskRequest task, NodeInfo node, Snapshot snapshot, PluginSet plugins) {
    return filter(task, node, snapshot, filters(plugins), new CycleState()).feasible();
  }

  /** Reserve and Bind for {@code task} on a node that passed its filters: the cards (or shard), or why not. */
  public Decision placeOn(TaskRequest task, NodeInfo node, double score, Snapshot snapshot, PluginSet plugins) {
    return place(task, node, score, snapshot, plugins, new CycleState());
  }

  /**
   * The same decision from the snapshot's memo: only nodes changed since this shape was last decided are judged.
   * The memo judges the shape (no task id, no queue time), so the nodes where those matter are judged again for
   * the task itself: its nominated node (held against every other task of its shape) and every reserved node.
   */
  private Decision decideMemoized(TaskRequest task, Snapshot snapshot, PluginSet plugins, List<FilterPlugin> filters,
                                  CycleState state) {
    TaskRequest shapeOnly = task.shape();
    DecisionMemo.Shape shape = snapshot.memo(plugins).shape(shapeOnly, snapshot,
        node -> evaluate(shapeOnly, node, snapshot, plugins, filters, state));
    // what the shape cannot judge is judged for the task itself: its nominated node, and the reserved nodes
    Map<String, NodeEvaluation> own = new java.util.LinkedHashMap<>();
    Nomination nomination = snapshot.nominationOf(task.id());
    if (nomination != null && snapshot.node(nomination.nodeId()) != null) {
      own.put(nomination.nodeId(), null);
    }
    snapshot.reservations().nodes().stream().filter(id -> snapshot.node(id) != null).forEach(id -> own.put(id, null));
    own.replaceAll((id, none) -> evaluate(task, snapshot.node(id), snapshot, plugins, filters, state));
    NodeEvaluation best = own.isEmpty() ? shape.best() : shape.bestExcept(own.keySet());
    for (NodeEvaluation mine : own.values()) {
      if (mine.feasible() && (best == null || NodeEvaluation.BEST_FIRST.compare(mine, best) < 0)) {
        best = mine;
      }
    }
    if (best == null) {
      List<NodeEvaluation> refused = new ArrayList<>(snapshot.size());
      snapshot.nodeViews().forEach(node -> refused.add(own.getOrDefault(node.id(), shape.of(node.id()))));
      return unschedulable(task, snapshot, plugins, state, refused);
    }
    return place(task, best.node(), best.score(), snapshot, plugins, state);
  }

  private static NodeEvaluation evaluate(TaskRequest task, NodeInfo node, Snapshot snapshot, PluginSet plugins,
                                         List<FilterPlugin> filters, CycleState state) {
    NodeEvaluation verdict = filter(task, node, snapshot, filters, state);
    return verdict.feasible() ? new NodeEvaluation(node, verdict.verdict(), verdict.stage(),
        weightedScore(task, node, plugins, state)) : verdict;
  }

  private List<FilterPlugin> filters(PluginSet plugins) {
    FilterChain current = chain;
    if (current.plugins() != plugins) {
      List<FilterPlugin> filters = new ArrayList<>(plugins.filters());
      if (loadFilter != null) {
        filters.add(loadFilter);
      }
      current = new FilterChain(plugins, List.copyOf(filters));
      chain = current;
    }
    return current.filters();
  }

  private static NodeEvaluation filter(TaskRequest task, NodeInfo node, Snapshot snapshot, List<FilterPlugin> filters,
                                       CycleState state) {
    Status verdict = Status.ok();
    int stage = 0;
    for (; stage < filters.size() && verdict.isOk(); stage++) {
      verdict = filters.get(stage).filter(task, node, snapshot, state);
    }
    return new NodeEvaluation(node, verdict, stage, 0);
  }

  /** No node passed: the reason with counts, and the PostFilter plugins asked for a nomination. */
  private Decision unschedulable(TaskRequest task, Snapshot snapshot, PluginSet plugins, CycleState state,
                                 List<NodeEvaluation> refused) {
    NodeRejections rejections = new NodeRejections();
    refused.forEach(rejections::add);
    Decision decision = rejections.decision(snapshot.size());
    if (plugins.postFilters().isEmpty()) {
      return decision;
    }
    List<FilterPlugin> filters = plugins.filters();
    PostFilterPlugin.Refusals refusals = new PostFilterPlugin.Refusals() {
      private Map<String, Status> view;

      @Override
      public ReasonCode code() {
        return decision.code();
      }

      @Override
      public Map<String, Status> byNode() {
        if (view == null) {
          Map<String, Status> statuses = new LinkedHashMap<>();
          refused.forEach(evaluation -> statuses.put(evaluation.node().id(), evaluation.verdict()));
          view = Collections.unmodifiableMap(statuses);
        }
        return view;
      }

      @Override
      public List<String> refusedWith(ReasonCode code) {
        List<String> ids = new ArrayList<>();
        for (NodeEvaluation evaluation : refused) {
          if (evaluation.verdict().code() == code) {
            ids.add(evaluation.node().id());
          }
        }
        return ids;
      }

      @Override
      public boolean passes(NodeInfo node) {
        return filter(task, node, snapshot, filters, state).feasible();
      }
    };
    for (PostFilterPlugin postFilter : plugins.postFilters()) {
      PostFilterPlugin.Result result = postFilter.postFilter(task, snapshot, refusals, state);
      if (result != null && result.nominates()) {
        return decision.nominating(result);
      }
    }
    return decision;
  }

  /** Reserve, then Bind (whole cards) or the shard placement on the chosen node's cards under the load thresholds. */
  private Decision place(TaskRequest task, NodeInfo chosen, double bestScore, Snapshot snapshot, PluginSet plugins,
                         CycleState state) {
    NodeInfo best = limits == null ? chosen : limits.usable(chosen);
    List<ReservePlugin> reserves = plugins.reserves();
    for (int i = 0; i < reserves.size(); i++) {
      Status verdict = reserves.get(i).reserve(task, best, state);
      if (!verdict.isOk()) {
        unreserve(reserves, i, task, best, state);
        return Decision.unschedulable(verdict.code(), "node " + best.id() + " " + verdict.reason());
      }
    }
    Decision decision = bind(task, best, bestScore, snapshot, plugins, state);
    if (!decision.isPlaced()) {
      unreserve(reserves, reserves.size(), task, best, state);
    }
    return decision;
  }

  private static void unreserve(List<ReservePlugin> reserves, int reserved, TaskRequest task, NodeInfo node,
                                CycleState state) {
    for (int i = reserved - 1; i >= 0; i--) {
      reserves.get(i).unreserve(task, node, state);
    }
  }

  private Decision bind(TaskRequest task, NodeInfo best, double bestScore, Snapshot snapshot, PluginSet plugins,
                        CycleState state) {
    if (task.isShard()) {
      ShardPlacer placer = plugins.shardPlacer() != null ? plugins.shardPlacer() : shardPlacer;
      ShardAssignment shard = placer.place(task, best, snapshot.boundary(), state);
      return shard == null
          ? Decision.unschedulable(ReasonCode.ShardAllocationFailed, "node " + best.id() + " has no card for the shard")
          : Decision.placed(best.id(), List.of(), shard, bestScore);
    }
    BindPlugin bind = plugins.bind() != null ? plugins.bind() : defaultBind;
    List<Integer> cards = task.gpuRequired() == 0 ? List.of() : bind.pickCards(task, best, state);
    if (cards.size() != task.gpuRequired()) {
      return Decision.unschedulable(ReasonCode.InsufficientResources,
          "node " + best.id() + " passed the filters but " + bind.name() + " found no " + task.gpuRequired()
              + " free cards");
    }
    return Decision.placed(best.id(), cards, null, bestScore);
  }

  /** Each feasible node's weighted total (index = position in {@code feasible}). */
  private static double[] score(TaskRequest task, List<NodeInfo> feasible, PluginSet plugins, CycleState state) {
    int count = feasible.size();
    double[] totals = new double[count];
    boolean parallel = (long) count * plugins.scores().size() >= PARALLEL_SCORING_THRESHOLD;
    if (!plugins.normalizes()) {
      forEachNode(count, parallel, i -> totals[i] = weightedScore(task, feasible.get(i), plugins, state));
      return totals;
    }
    double[] scores = new double[count];
    for (PluginSet.WeightedScore weighted : plugins.scores()) {
      ScorePlugin plugin = weighted.plugin();
      forEachNode(count, parallel, i -> scores[i] = plugin.score(task, feasible.get(i), state));
      if (plugin instanceof NormalizeScorePlugin normalizer) {
        normalizer.normalizeScores(task, feasible, scores, state);
      }
      for (int i = 0; i < count; i++) {
        totals[i] += weighted.weight() * clamp(scores[i]);
      }
    }
    return totals;
  }

  private static void forEachNode(int count, boolean parallel, IntConsumer body) {
    if (parallel) {
      IntStream.range(0, count).parallel().forEach(body);
    } else {
      for (int i = 0; i < count; i++) {
        body.accept(i);
      }
    }
  }

  private static double weightedScore(TaskRequest task, NodeInfo node, PluginSet plugins, CycleState state) {
    double total = 0;
    for (PluginSet.WeightedScore weighted : plugins.scores()) {
      total += weighted.weight() * clamp(weighted.plugin().score(task, node, state));
    }
    return total;
  }

  private static double clamp(double score) {
    return Math.max(0, Math.min(100, score));
  }
}
