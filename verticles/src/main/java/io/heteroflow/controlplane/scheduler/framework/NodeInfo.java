package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable view of one node in a scheduling snapshot: its live load, its cards, and how many active
 * allocations each card holds. Staging a decision yields a new NodeInfo; nothing here is mutated.
 */
public record NodeInfo(String id, String gpuVendor, String status, boolean executable, String dedicatedTenant,
                       String region, String zone, String rack, Map<String, String> labels, String topology,
                       int cpuCores, double cpuPercent, double memoryTotalGb, long memoryUsedMb,
                       int gpuTotal, int gpuUsed, List<CardInfo> cards, Map<Integer, Integer> tasksPerCard) {

  /** A card whose memory use is at or above this percentage cannot take a whole-card task (SPEC §3). */
  public static final double CARD_MEMORY_FULL_PERCENT = 95.0;

  public NodeInfo {
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    cards = cards == null ? List.of() : List.copyOf(cards);
    tasksPerCard = tasksPerCard == null ? Map.of() : Map.copyOf(tasksPerCard);
  }

  public boolean cardIsFree(CardInfo card) {
    return tasksPerCard.getOrDefault(card.index(), 0) == 0 && card.memoryUsedPercent() < CARD_MEMORY_FULL_PERCENT;
  }

  /**
   * Cards that can take a whole-card task now (no active allocation, memory use under 95 %), by index;
   * restricted to {@code allowedModels} when that list is not empty.
   */
  public List<CardInfo> freeCards(List<String> allowedModels) {
    List<CardInfo> free = new ArrayList<>();
    for (CardInfo card : cards) {
      if (cardIsFree(card) && (allowedModels.isEmpty()
          || allowedModels.stream().anyMatch(model -> model.equalsIgnoreCase(card.model())))) {
        free.add(card);
      }
    }
    free.sort(Comparator.comparingInt(CardInfo::index));
    return free;
  }

  /** How many whole cards a task allowed on {@code allowedModels} could get here, within the node's accounting. */
  public int freeCardCount(List<String> allowedModels) {
    return Math.max(0, Math.min(freeCards(allowedModels).size(), gpuTotal - gpuUsed));
  }

  /** The staged view of this node after binding {@code gpuIndices} to a new task. */
  public NodeInfo withBound(List<Integer> gpuIndices) {
    Map<Integer, Integer> perCard = new HashMap<>(tasksPerCard);
    for (int index : gpuIndices) {
      perCard.merge(index, 1, Integer::sum);
    }
    return new NodeInfo(id, gpuVendor, status, executable, dedicatedTenant, region, zone, rack, labels, topology,
        cpuCores, cpuPercent, memoryTotalGb, memoryUsedMb, gpuTotal, gpuUsed + gpuIndices.size(), cards, perCard);
  }
}
