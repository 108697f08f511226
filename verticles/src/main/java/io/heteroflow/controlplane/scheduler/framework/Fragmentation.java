package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Fragmentation at a glance (SPEC §13): how many schedulable nodes have 0, 1, 2, … free whole cards, how many
 * are entirely free, and the largest whole-card task that still fits on one node.
 */
public record Fragmentation(Map<Integer, Integer> freeCardsPerNode, int wholeFreeNodes, int largestPlaceableTask,
                            int freeCards, int totalCards) {

  /** One node's part: whether it takes work (online or busy), its card count and its free whole cards. */
  public record NodeCards(boolean schedulable, int gpuTotal, int freeCards) {
  }

  public static boolean schedulable(String status) {
    return "online".equals(status) || "busy".equals(status);
  }

  public static Fragmentation of(List<NodeCards> nodes) {
    Map<Integer, Integer> histogram = new TreeMap<>();
    int wholeFree = 0;
    int largest = 0;
    int free = 0;
    int total = 0;
    for (NodeCards node : nodes) {
      if (!node.schedulable()) {
        continue;
      }
      histogram.merge(node.freeCards(), 1, Integer::sum);
      wholeFree += node.gpuTotal() > 0 && node.freeCards() == node.gpuTotal() ? 1 : 0;
      largest = Math.max(largest, node.freeCards());
      free += node.freeCards();
      total += node.gpuTotal();
    }
    return new Fragmentation(histogram, wholeFree, largest, free, total);
  }
}
