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

  public static Fragmentation of(List<NodeInfo> nodes) {
    Map<Integer, Integer> histogram = new TreeMap<>();
    int wholeFree = 0;
    int largest = 0;
    int free = 0;
    int total = 0;
    for (NodeInfo node : nodes) {
      if (!"online".equals(node.status()) && !"busy".equals(node.status())) {
        continue;
      }
      int nodeFree = node.freeCardCount(List.of());
      histogram.merge(nodeFree, 1, Integer::sum);
      wholeFree += node.gpuTotal() > 0 && nodeFree == node.gpuTotal() ? 1 : 0;
      largest = Math.max(largest, nodeFree);
      free += nodeFree;
      total += node.gpuTotal();
    }
    return new Fragmentation(histogram, wholeFree, largest, free, total);
  }
}
