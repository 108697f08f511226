package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One node's cards of one model, counted by PostgreSQL ({@link NodeStore#cardCounts()}): what the cluster
 * gauges and the fragmentation view need, without reading every card and allocation row into the JVM. A card
 * is used when an active allocation holds it, free when nothing holds it and its memory is under
 * NodeInfo.CARD_MEMORY_FULL_PERCENT (NodeInfo.cardIsFree, the scheduler's own rule). A node without cards has
 * one row with a null model and zero counts.
 */
public record CardCounts(String nodeId, String vendor, String status, int gpuTotal, OffsetDateTime lastHeartbeatAt,
                         String model, int total, int used, int free, long shardMemoryMb) {

  /** The fragmentation view over these rows (a node's rows summed). */
  public static Fragmentation fragmentation(List<CardCounts> rows) {
    Map<String, Fragmentation.NodeCards> nodes = new LinkedHashMap<>();
    for (CardCounts row : rows) {
      nodes.merge(row.nodeId(), new Fragmentation.NodeCards(Fragmentation.schedulable(row.status()), row.gpuTotal(),
          row.free()), (a, b) -> new Fragmentation.NodeCards(a.schedulable(), a.gpuTotal(), a.freeCards() + b.freeCards()));
    }
    return Fragmentation.of(List.copyOf(nodes.values()));
  }
}
