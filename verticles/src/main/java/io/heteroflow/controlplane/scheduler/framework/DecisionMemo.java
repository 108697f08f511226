package io.heteroflow.controlplane.scheduler.framework;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The filter verdicts and scores of every node for each task shape decided on one snapshot, kept current as the
 * round stages placements: after the first task of a shape, a node is evaluated again only once it changed.
 * A round of 200 tasks of a handful of shapes on 5,000 nodes then evaluates a few tens of thousands of
 * (task, node) pairs instead of a million. It is valid only while every filter and score depends on nothing but
 * the task's shape, the node and the tenant boundary, which is what the filter and score interfaces see; a
 * PreFilter, PreScore or NormalizeScore plugin sees the whole task or candidate list, so the pipeline does not
 * use the memo then ({@link PluginSet#memoizable}). Its
 * answers equal a full evaluation's: same verdicts, same order (score, then node id).
 */
final class DecisionMemo {
  /** Every node's evaluation for one task shape, and the feasible ones best first. */
  static final class Shape {
    private final Map<String, NodeEvaluation> byNode = new HashMap<>();
    private final TreeSet<NodeEvaluation> feasible = new TreeSet<>(NodeEvaluation.BEST_FIRST);
    private int synced;

    private void put(NodeEvaluation evaluation) {
      NodeEvaluation before = byNode.put(evaluation.node().id(), evaluation);
      if (before != null && before.feasible()) {
        feasible.remove(before);
      }
      if (evaluation.feasible()) {
        feasible.add(evaluation);
      }
    }

    /** The best feasible node, or null when none is. */
    NodeEvaluation best() {
      return feasible.isEmpty() ? null : feasible.first();
    }

    /** The best feasible node not among {@code skipped} (judged for the task itself), or null. */
    NodeEvaluation bestExcept(java.util.Set<String> skipped) {
      for (NodeEvaluation evaluation : feasible) {
        if (!skipped.contains(evaluation.node().id())) {
          return evaluation;
        }
      }
      return null;
    }

    NodeEvaluation of(String nodeId) {
      return byNode.get(nodeId);
    }

    /** Every node's evaluation (read-only view). */
    java.util.Collection<NodeEvaluation> all() {
      return java.util.Collections.unmodifiableCollection(byNode.values());
    }

    int feasibleCount() {
      return feasible.size();
    }

    /** The feasible evaluations, best first (a copy: the memo moves on as the round stages placements). */
    java.util.List<NodeEvaluation> feasibleBestFirst() {
      return java.util.List.copyOf(feasible);
    }
  }

  /** At most this many shapes are kept (least recently decided first out): memory stays bounded. */
  static final int MAX_SHAPES = 64;

  private final PluginSet plugins;
  private final Map<TaskRequest, Shape> shapes = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<TaskRequest, Shape> eldest) {
      return size() > MAX_SHAPES;
    }
  };

  DecisionMemo(PluginSet plugins) {
    this.plugins = plugins;
  }

  boolean serves(PluginSet candidate) {
    return candidate == plugins;
  }

  /** The task's shape, brought up to date with the snapshot's changes ({@code evaluate} judges one node). */
  Shape shape(TaskRequest task, Snapshot snapshot, Function<NodeInfo, NodeEvaluation> evaluate) {
    TaskRequest key = task.shape();
    Shape shape = shapes.get(key);
    if (shape == null) {
      shape = new Shape();
      for (NodeInfo node : snapshot.nodeViews()) {
        shape.put(evaluate.apply(node));
      }
      shapes.put(key, shape);
    } else {
      Set<String> changed = new LinkedHashSet<>(snapshot.changesSince(shape.synced));
      for (String nodeId : changed) {
        shape.put(evaluate.apply(snapshot.node(nodeId)));
      }
    }
    shape.synced = snapshot.changeCount();
    return shape;
  }
}
