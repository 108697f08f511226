package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Plain-Java scheduling of one task on a snapshot: the built-in filter chain (SPEC §2.1), then the plugin
 * filters, then the weighted sum of the score plugins, then the card picker. No Vert.x, no database: the
 * verticles, the benchmark and the trace simulator all run this same code.
 */
public final class SchedulingPipeline {
  private final List<FilterPlugin> builtInFilters;
  private final CardPicker cardPicker;

  public SchedulingPipeline(List<FilterPlugin> builtInFilters, CardPicker cardPicker) {
    this.builtInFilters = List.copyOf(builtInFilters);
    this.cardPicker = cardPicker;
  }

  public Decision decide(TaskRequest task, Snapshot snapshot, PluginSet plugins) {
    List<FilterPlugin> filters = new ArrayList<>(builtInFilters);
    filters.addAll(plugins.filters());
    Map<String, Integer> rejections = new LinkedHashMap<>();
    ReasonCode furthest = null;
    int furthestStage = -1;
    NodeInfo best = null;
    long bestScore = Long.MIN_VALUE;
    for (NodeInfo node : snapshot.nodes()) {
      Status verdict = Status.ok();
      int stage = 0;
      for (; stage < filters.size() && verdict.isOk(); stage++) {
        verdict = filters.get(stage).filter(task, node);
      }
      if (!verdict.isOk()) {
        rejections.merge(verdict.reason(), 1, Integer::sum);
        if (stage > furthestStage) {
          furthestStage = stage;
          furthest = verdict.code();
        }
        continue;
      }
      long score = weightedScore(task, node, plugins);
      if (score > bestScore || (score == bestScore && node.id().compareTo(best.id()) < 0)) {
        best = node;
        bestScore = score;
      }
    }
    if (best == null) {
      return Decision.unschedulable(furthest == null ? ReasonCode.NoSchedulableNodes : furthest,
          explain(snapshot.size(), rejections));
    }
    List<Integer> cards = cardPicker.pick(task, best);
    if (cards.size() != task.gpuRequired()) {
      return Decision.unschedulable(ReasonCode.InsufficientResources,
          "node " + best.id() + " passed the filters but " + cardPicker.name() + " found no " + task.gpuRequired()
              + " free cards");
    }
    return Decision.placed(best.id(), cards, (int) Math.min(Integer.MAX_VALUE, bestScore));
  }

  private static long weightedScore(TaskRequest task, NodeInfo node, PluginSet plugins) {
    long total = 0;
    for (PluginSet.WeightedScore weighted : plugins.scores()) {
      int score = Math.max(0, Math.min(100, weighted.plugin().score(task, node)));
      total += (long) weighted.weight() * score;
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
