package io.heteroflow.controlplane.scheduler.plugins.frag;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The workload's mix of task shapes, as probabilities: fixed (a trace's whole pod list, for the simulator)
 * or learned from the last tasks the scheduler placed (a sliding window). Every shape counts, however rare:
 * leaving out the rare ones cost 1.8 points of allocation on the CPU-heavy cpu250 trace.
 */
public final class TaskShapeMix {
  /** One shape and its probability. */
  public record Weighted(TaskShape shape, double probability) {
  }

  private final int window;
  private final Deque<TaskShape> recent = new ArrayDeque<>();
  private final Map<TaskShape, Integer> counts = new HashMap<>();
  private volatile List<Weighted> weights = List.of();
  private volatile ShapeGroups groups = ShapeGroups.of(List.of());
  private volatile List<ModelPressure.Demand> demands = List.of();

  private TaskShapeMix(int window) {
    this.window = window;
  }

  public static TaskShapeMix fixed(List<TaskShape> shapes) {
    TaskShapeMix mix = new TaskShapeMix(Integer.MAX_VALUE);
    shapes.forEach(shape -> mix.counts.merge(shape, 1, Integer::sum));
    mix.publish(shapes.size());
    return mix;
  }

  public static TaskShapeMix learning(int window) {
    return new TaskShapeMix(window);
  }

  /** Adds a task the scheduler is about to place (learning mixes only). */
  public synchronized void observe(TaskShape shape) {
    if (window == Integer.MAX_VALUE) {
      return;
    }
    recent.addLast(shape);
    counts.merge(shape, 1, Integer::sum);
    if (recent.size() > window) {
      counts.computeIfPresent(recent.removeFirst(), (key, count) -> count == 1 ? null : count - 1);
    }
    publish(recent.size());
  }

  public List<Weighted> weights() {
    return weights;
  }

  /** The mix compiled for the fragmentation measure. */
  ShapeGroups groups() {
    return groups;
  }

  /** The mix's GPU demand by allowed model set. */
  List<ModelPressure.Demand> demands() {
    return demands;
  }

  private void publish(int total) {
    List<Weighted> list = new ArrayList<>();
    counts.forEach((shape, count) -> list.add(new Weighted(shape, (double) count / total)));
    groups = ShapeGroups.of(list);
    demands = ModelPressure.demands(list);
    weights = List.copyOf(list);
  }
}
