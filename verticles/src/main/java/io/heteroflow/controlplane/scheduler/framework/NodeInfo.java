package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable view of one node in a scheduling snapshot: its live load, its cards, what active allocations
 * hold on each card, and its accounted CPU / memory. Staging a decision yields a new NodeInfo.
 * {@code serviceReplicas}: how many active replicas of each inference service (by service id, the
 * {@link TaskRequest#SERVICE_LABEL} value) the node holds, whether or not they hold cards.
 */
public record NodeInfo(String id, String gpuVendor, String status, boolean executable, String dedicatedTenant,
                       String region, String zone, String rack, Map<String, String> labels, String topology,
                       int cpuCores, double cpuPercent, double memoryTotalGb, long memoryUsedMb,
                       int gpuTotal, int gpuUsed, double cpuAllocated, long memoryAllocatedMb, int inferenceTasks,
                       List<CardInfo> cards, Map<Integer, CardUse> cardUse, boolean cordoned,
                       Map<String, Integer> serviceReplicas) {

  /** A card whose memory use is at or above this percentage cannot take a whole-card task (SPEC §3). */
  public static final double CARD_MEMORY_FULL_PERCENT = 95.0;

  public NodeInfo {
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    cards = cards == null ? List.of() : List.copyOf(cards);
    cardUse = cardUse == null ? Map.of() : Map.copyOf(cardUse);
    serviceReplicas = serviceReplicas == null ? Map.of() : Map.copyOf(serviceReplicas);
  }

  /** A node holding no service replicas. */
  public NodeInfo(String id, String gpuVendor, String status, boolean executable, String dedicatedTenant,
                  String region, String zone, String rack, Map<String, String> labels, String topology,
                  int cpuCores, double cpuPercent, double memoryTotalGb, long memoryUsedMb,
                  int gpuTotal, int gpuUsed, double cpuAllocated, long memoryAllocatedMb, int inferenceTasks,
                  List<CardInfo> cards, Map<Integer, CardUse> cardUse, boolean cordoned) {
    this(id, gpuVendor, status, executable, dedicatedTenant, region, zone, rack, labels, topology, cpuCores,
        cpuPercent, memoryTotalGb, memoryUsedMb, gpuTotal, gpuUsed, cpuAllocated, memoryAllocatedMb, inferenceTasks,
        cards, cardUse, cordoned, Map.of());
  }

  /** How many active replicas of service {@code serviceId} this node holds. */
  public int replicasOf(String serviceId) {
    return serviceReplicas.getOrDefault(serviceId, 0);
  }

  /** A node that is not cordoned (an admin's cordon is the only source of {@code cordoned}). */
  public NodeInfo(String id, String gpuVendor, String status, boolean executable, String dedicatedTenant,
                  String region, String zone, String rack, Map<String, String> labels, String topology,
                  int cpuCores, double cpuPercent, double memoryTotalGb, long memoryUsedMb,
                  int gpuTotal, int gpuUsed, double cpuAllocated, long memoryAllocatedMb, int inferenceTasks,
                  List<CardInfo> cards, Map<Integer, CardUse> cardUse) {
    this(id, gpuVendor, status, executable, dedicatedTenant, region, zone, rack, labels, topology, cpuCores,
        cpuPercent, memoryTotalGb, memoryUsedMb, gpuTotal, gpuUsed, cpuAllocated, memoryAllocatedMb, inferenceTasks,
        cards, cardUse, false);
  }

  public CardUse use(int index) {
    return cardUse.getOrDefault(index, CardUse.NONE);
  }

  public boolean cardIsFree(CardInfo card) {
    return use(card.index()).isEmpty() && card.memoryUsedPercent() < CARD_MEMORY_FULL_PERCENT;
  }

  /**
   * Cards that can take a whole-card task now (nothing allocated on them, memory use under 95 %), by index;
   * restricted to {@code allowedModels} when that list is not empty.
   */
  public List<CardInfo> freeCards(List<String> allowedModels) {
    List<CardInfo> free = new ArrayList<>();
    for (CardInfo card : cards) {
      if (cardIsFree(card) && allows(allowedModels, card)) {
        free.add(card);
      }
    }
    return free;
  }

  public static boolean allows(List<String> allowedModels, CardInfo card) {
    return allowedModels.isEmpty() || allowedModels.stream().anyMatch(model -> model.equalsIgnoreCase(card.model()));
  }

  /** How many whole cards a task allowed on {@code allowedModels} could get here, within the node's accounting. */
  public int freeCardCount(List<String> allowedModels) {
    return Math.max(0, Math.min(freeCards(allowedModels).size(), gpuTotal - gpuUsed));
  }

  /**
   * How many whole cards {@code task} could get here: free cards of its allowed models with its
   * {@code gpu_memory_mb} free on each, within the node's accounting.
   */
  public long wholeCardsFor(TaskRequest task) {
    long fitting = freeCards(task.gpuModels()).stream()
        .filter(card -> task.gpuMemoryMb() <= 0 || card.memoryTotalMb() - card.memoryUsedMb() >= task.gpuMemoryMb())
        .count();
    return Math.min(fitting, freeCardCount(task.gpuModels()));
  }

  public double cpuFree() {
    return cpuCores - cpuAllocated;
  }

  public long memoryFreeMb() {
    return (long) (memoryTotalGb * 1024) - memoryAllocatedMb;
  }

  /** This node with other card use (e.g. cards over the load thresholds counted as held). */
  public NodeInfo withCardUse(Map<Integer, CardUse> use) {
    return new NodeInfo(id, gpuVendor, status, executable, dedicatedTenant, region, zone, rack, labels, topology,
        cpuCores, cpuPercent, memoryTotalGb, memoryUsedMb, gpuTotal, gpuUsed, cpuAllocated, memoryAllocatedMb,
        inferenceTasks, cards, use, cordoned, serviceReplicas);
  }

  /** The staged view of this node after binding {@code task} to {@code gpuIndices} or to {@code shard}. */
  public NodeInfo withBound(TaskRequest task, List<Integer> gpuIndices, ShardAssignment shard) {
    Map<Integer, CardUse> use = new HashMap<>(cardUse);
    for (int index : gpuIndices) {
      use.put(index, use(index).plusWhole(task.tenant()));
    }
    if (shard != null) {
      use.put(shard.cardIndex(), use(shard.cardIndex()).plusShard(task.tenant(), shard.memoryMb()));
    }
    return new NodeInfo(id, gpuVendor, status, executable, dedicatedTenant, region, zone, rack, labels, topology,
        cpuCores, cpuPercent, memoryTotalGb, memoryUsedMb, gpuTotal, gpuUsed + gpuIndices.size(),
        cpuAllocated + task.cpuCores(), memoryAllocatedMb + task.memoryMb(),
        inferenceTasks + (task.isInference() ? 1 : 0), cards, use, cordoned, plusReplica(task.service()));
  }

  private Map<String, Integer> plusReplica(String serviceId) {
    if (serviceId == null) {
      return serviceReplicas;
    }
    Map<String, Integer> replicas = new HashMap<>(serviceReplicas);
    replicas.merge(serviceId, 1, Integer::sum);
    return replicas;
  }
}
