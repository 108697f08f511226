package io.heteroflow.controlplane.scheduler.plan;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The order among queues (SPEC §13): dominant resource fairness against weight, level by level down the queue
 * tree. Each queue's dominant share is the largest of its subtree's use of GPU-equivalents, CPU and memory, each
 * over the fleet's total; among siblings the one with the smallest share per unit of weight goes next (a queue's
 * own tasks compete with its children as one more child of the same weight). Inside a queue the given order holds
 * (priority, then FIFO). Taking a task adds what it asks for to its queue's use, so a long queue does not take
 * every turn (progressive filling).
 */
public final class FairShare {
  private FairShare() {}

  /** One queue of the tree ({@code parent} null for the root). */
  public record Queue(String name, String parent, int weight) {
  }

  /** An amount of the three resources shares are measured in: GPU-equivalents, CPU cores, memory (MB). */
  public record Amount(double gpuEq, double cpuCores, double memoryMb) {
    public static final Amount NONE = new Amount(0, 0, 0);

    public Amount plus(Amount other) {
      return new Amount(gpuEq + other.gpuEq, cpuCores + other.cpuCores, memoryMb + other.memoryMb);
    }

    /** The largest of the three fractions of {@code total} (a resource the fleet has none of counts 0). */
    double dominantShareOf(Amount total) {
      return Math.max(fraction(gpuEq, total.gpuEq), Math.max(fraction(cpuCores, total.cpuCores),
          fraction(memoryMb, total.memoryMb)));
    }

    private static double fraction(double part, double whole) {
      return whole <= 0 ? 0 : part / whole;
    }
  }

  /**
   * {@code items} (each queue's in its own order) in fair-share order. {@code use} is each queue's own current use
   * (not its descendants'); an item of a queue the tree does not know counts as the root's.
   */
  public static <T> List<T> order(List<T> items, Function<T, String> queueOf, Function<T, Amount> demandOf,
                                  Map<String, Queue> tree, Map<String, Amount> use, Amount total) {
    String root = tree.values().stream().filter(queue -> queue.parent() == null).map(Queue::name).findFirst()
        .orElse("root");
    Map<String, Deque<T>> waiting = new LinkedHashMap<>();
    for (T item : items) {
      String queue = tree.containsKey(queueOf.apply(item)) ? queueOf.apply(item) : root;
      waiting.computeIfAbsent(queue, k -> new ArrayDeque<>()).add(item);
    }
    if (waiting.size() < 2) {
      return List.copyOf(items);
    }
    Map<String, List<String>> children = new HashMap<>();
    tree.values().stream().filter(queue -> queue.parent() != null).sorted(Comparator.comparing(Queue::name))
        .forEach(queue -> children.computeIfAbsent(queue.parent(), k -> new ArrayList<>()).add(queue.name()));
    Map<String, Amount> own = new HashMap<>(use);
    Map<String, Amount> subtree = new HashMap<>();
    Map<String, Integer> pendingBelow = new HashMap<>();
    tree.keySet().forEach(name -> {
      for (String up = name; up != null; up = tree.get(up).parent()) {
        subtree.merge(up, own.getOrDefault(name, Amount.NONE), Amount::plus);
        if (waiting.containsKey(name)) {
          pendingBelow.merge(up, waiting.get(name).size(), Integer::sum);
        }
      }
    });
    List<T> ordered = new ArrayList<>(items.size());
    while (ordered.size() < items.size()) {
      String at = root;
      while (true) {
        String next = null;
        double best = Double.MAX_VALUE;
        if (!waiting.getOrDefault(at, new ArrayDeque<>()).isEmpty()) {
          next = at;
          best = own.getOrDefault(at, Amount.NONE).dominantShareOf(total) / tree.get(at).weight();
        }
        for (String child : children.getOrDefault(at, List.of())) {
          double share = subtree.getOrDefault(child, Amount.NONE).dominantShareOf(total) / tree.get(child).weight();
          if (pendingBelow.getOrDefault(child, 0) > 0 && share < best) {
            next = child;
            best = share;
          }
        }
        if (next.equals(at)) {
          break;
        }
        at = next;
      }
      T item = waiting.get(at).poll();
      ordered.add(item);
      Amount demand = demandOf.apply(item);
      own.merge(at, demand, Amount::plus);
      for (String up = at; up != null; up = tree.get(up).parent()) {
        subtree.merge(up, demand, Amount::plus);
        pendingBelow.merge(up, -1, Integer::sum);
      }
    }
    return ordered;
  }
}
