package io.heteroflow.controlplane.metrics;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.store.NodeRecord;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The cluster-state series of /metrics, refreshed from PostgreSQL every few seconds on every member: cards by
 * vendor, model and state, shard memory, pending tasks by reason and priority band, fragmentation, heartbeat
 * age per node and the leader term.
 */
public final class ClusterGauges extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(ClusterGauges.class.getName());
  private final Services services;
  private final long periodMs;
  private final MultiGauge cards;
  private final MultiGauge pending;
  private final MultiGauge freeCardsPerNode;
  private final MultiGauge heartbeatAge;
  private final AtomicLong shardMemory = new AtomicLong();
  private final AtomicLong wholeFreeNodes = new AtomicLong();
  private final AtomicLong largestPlaceable = new AtomicLong();
  private final AtomicLong leaderTerm = new AtomicLong();

  public ClusterGauges(Services services, long periodMs) {
    this.services = services;
    this.periodMs = periodMs;
    MeterRegistry registry = services.meterRegistry();
    cards = MultiGauge.builder("heteroflow_cards").description("cards by vendor, model and state (total, used, free)")
        .register(registry);
    pending = MultiGauge.builder("heteroflow_tasks_pending")
        .description("pending tasks by reason and priority band (high >= 80, normal >= 40, low)").register(registry);
    freeCardsPerNode = MultiGauge.builder("heteroflow_fragmentation_nodes")
        .description("schedulable nodes by their number of free whole cards").register(registry);
    heartbeatAge = MultiGauge.builder("heteroflow_heartbeat_age_seconds")
        .description("seconds since each node's last heartbeat (control-plane clock)").register(registry);
    Gauge.builder("heteroflow_shard_memory_allocated_mb", shardMemory, AtomicLong::get)
        .description("card memory held by fractional shards").register(registry);
    Gauge.builder("heteroflow_fragmentation_whole_free_nodes", wholeFreeNodes, AtomicLong::get)
        .description("schedulable nodes with every card free").register(registry);
    Gauge.builder("heteroflow_fragmentation_largest_placeable_cards", largestPlaceable, AtomicLong::get)
        .description("the largest whole-card task that still fits on one node").register(registry);
    Gauge.builder("heteroflow_leader_term", leaderTerm, AtomicLong::get)
        .description("the current leader term in PostgreSQL").register(registry);
  }

  @Override
  public Future<?> start() {
    vertx.setPeriodic(0, periodMs, id -> refresh().onFailure(e -> LOG.log(Level.FINE, "gauges not refreshed", e)));
    return Future.succeededFuture();
  }

  public Future<Void> refresh() {
    Future<List<NodeRecord>> nodes = services.nodes().all();
    Future<Map<List<String>, Long>> queue = services.tasks().pendingByReasonAndBand();
    Future<io.vertx.core.json.JsonObject> leader = services.leaders().describe(10);
    return Future.all(nodes, queue, leader).map(all -> {
      List<NodeInfo> infos = nodes.result().stream().map(NodeRecord::info).toList();
      cards.register(cardRows(infos), true);
      List<MultiGauge.Row<?>> queueRows = new ArrayList<>();
      queue.result().forEach((key, count) -> queueRows.add(
          MultiGauge.Row.of(Tags.of("reason", key.get(0), "priority_band", key.get(1)), count)));
      pending.register(queueRows, true);
      Fragmentation fragmentation = Fragmentation.of(infos);
      List<MultiGauge.Row<?>> histogram = new ArrayList<>();
      fragmentation.freeCardsPerNode().forEach((free, count) ->
          histogram.add(MultiGauge.Row.of(Tags.of("free_cards", String.valueOf(free)), count)));
      freeCardsPerNode.register(histogram, true);
      wholeFreeNodes.set(fragmentation.wholeFreeNodes());
      largestPlaceable.set(fragmentation.largestPlaceableTask());
      Instant now = Instant.now();
      List<MultiGauge.Row<?>> ages = new ArrayList<>();
      for (NodeRecord node : nodes.result()) {
        if (node.lastHeartbeatAt() != null) {
          ages.add(MultiGauge.Row.of(Tags.of("node", node.info().id()),
              Math.max(0, now.toEpochMilli() - node.lastHeartbeatAt().toInstant().toEpochMilli()) / 1000.0));
        }
      }
      heartbeatAge.register(ages, true);
      leaderTerm.set(leader.result().getJsonObject("leader").getLong("term", 0L));
      return null;
    });
  }

  private List<MultiGauge.Row<?>> cardRows(List<NodeInfo> nodes) {
    Map<List<String>, long[]> counts = new HashMap<>();
    long shards = 0;
    for (NodeInfo node : nodes) {
      for (CardInfo card : node.cards()) {
        long[] totalUsedFree = counts.computeIfAbsent(List.of(String.valueOf(node.gpuVendor()),
            String.valueOf(card.model())), key -> new long[3]);
        CardUse use = node.use(card.index());
        boolean schedulable = "online".equals(node.status()) || "busy".equals(node.status());
        totalUsedFree[0]++;
        totalUsedFree[1] += use.isEmpty() ? 0 : 1;
        totalUsedFree[2] += schedulable && node.cardIsFree(card) ? 1 : 0;
        shards += use.shardMemoryMb();
      }
    }
    shardMemory.set(shards);
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    counts.forEach((key, values) -> {
      String[] states = {"total", "used", "free"};
      for (int i = 0; i < states.length; i++) {
        rows.add(MultiGauge.Row.of(Tags.of("vendor", key.get(0), "model", key.get(1), "state", states[i]), values[i]));
      }
    });
    return rows;
  }
}
