package io.heteroflow.controlplane.metrics;

import io.heteroflow.controlplane.scheduler.framework.Fragmentation;
import io.heteroflow.controlplane.store.CardCounts;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.controlplane.store.TaskStore;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The cluster-state series of /metrics, refreshed from PostgreSQL every few seconds on every member: cards by
 * vendor, model and state, shard memory, pending tasks by reason and priority band, fragmentation, heartbeat
 * age per node, the leader term, each queue's use against its quota, and each running inference service's
 * desired and running replicas.
 */
public final class ClusterGauges extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(ClusterGauges.class.getName());
  /** Nodes per read of the card counts (a few milliseconds of PostgreSQL each). */
  static final int PAGE_NODES = 250;
  static final long PAGE_PAUSE_MS = 50;
  private final NodeStore nodes;
  private final TaskStore tasks;
  private final LeaderStore leaders;
  private final QueueStore queues;
  private final ServiceStore services;
  private final long periodMs;
  private final MultiGauge queueGauges;
  private final MultiGauge cards;
  private final MultiGauge pending;
  private final MultiGauge freeCardsPerNode;
  private final MultiGauge heartbeatAge;
  private final MultiGauge serviceReplicas;
  private final AtomicLong shardMemory = new AtomicLong();
  private final AtomicLong wholeFreeNodes = new AtomicLong();
  private final AtomicLong largestPlaceable = new AtomicLong();
  private final AtomicLong leaderTerm = new AtomicLong();
  /** Each node's last heartbeat (epoch ms) as last read; the age series read it when scraped. */
  private final Map<String, Long> lastHeartbeatMillis = new ConcurrentHashMap<>();
  private boolean refreshing;

  public ClusterGauges(NodeStore nodes, TaskStore tasks, LeaderStore leaders, QueueStore queues, ServiceStore services,
                       MeterRegistry registry, long periodMs) {
    this.nodes = nodes;
    this.tasks = tasks;
    this.leaders = leaders;
    this.queues = queues;
    this.services = services;
    queueGauges = MultiGauge.builder("heteroflow_queue").description("each queue (its subtree): GPU-equivalents in use,"
        + " guaranteed and max, active, pending and running tasks").register(registry);
    this.periodMs = periodMs;
    cards = MultiGauge.builder("heteroflow_cards").description("cards by vendor, model and state (total, used, free)")
        .register(registry);
    pending = MultiGauge.builder("heteroflow_tasks_pending")
        .description("pending tasks by reason and priority band (high >= 80, normal >= 40, low)").register(registry);
    freeCardsPerNode = MultiGauge.builder("heteroflow_fragmentation_nodes")
        .description("schedulable nodes by their number of free whole cards").register(registry);
    heartbeatAge = MultiGauge.builder("heteroflow_heartbeat_age_seconds")
        .description("seconds since each node's last heartbeat (control-plane clock)").register(registry);
    serviceReplicas = MultiGauge.builder("heteroflow_service_replicas").description("each running inference service's"
        + " replicas: desired, and running (in a wanted slot)").register(registry);
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
    vertx.setPeriodic(0, periodMs, id -> {
      if (!refreshing) { // a sweep of a large cluster may outlast the period
        refreshing = true;
        refresh().onComplete(done -> refreshing = false)
            .onFailure(e -> LOG.log(Level.FINE, "gauges not refreshed", e));
      }
    });
    return Future.succeededFuture();
  }

  /**
   * One sweep of PostgreSQL's card counts (aggregated there: a row per node and model, not every card and
   * allocation; read {@link #PAGE_NODES} nodes at a time, {@link #PAGE_PAUSE_MS} apart, so that on a large
   * cluster no single read competes with scheduling for long), the pending queue and the leader. The pages
   * are not one snapshot: a sweep's figures may mix moments about a second apart at 5,000 nodes. Heartbeat ages
   * are computed when /metrics is scraped, from the last heartbeat times read here; their series are
   * registered again only when the set of nodes changes.
   */
  public Future<Void> refresh() {
    Future<List<CardCounts>> counts = sweep("", new ArrayList<>());
    Future<Map<List<String>, Long>> queue = tasks.pendingByReasonAndBand();
    Future<io.vertx.core.json.JsonObject> leader = leaders.describe(10);
    Future<List<QueueRecord>> tree = queues.list();
    Future<Map<String, QueueStore.Usage>> usage = queues.usage();
    Future<List<ServiceStore.ReplicaCount>> replicas = services.replicaCounts();
    return Future.all(List.of(counts, queue, leader, tree, usage, replicas)).map(all -> {
      queueGauges.register(queueRows(tree.result(), usage.result()), true);
      serviceReplicas.register(serviceRows(replicas.result()), true);
      cards.register(cardRows(counts.result()), true);
      List<MultiGauge.Row<?>> queueRows = new ArrayList<>();
      queue.result().forEach((key, count) -> queueRows.add(
          MultiGauge.Row.of(Tags.of("reason", key.get(0), "priority_band", key.get(1)), count)));
      pending.register(queueRows, true);
      Fragmentation fragmentation = CardCounts.fragmentation(counts.result());
      List<MultiGauge.Row<?>> histogram = new ArrayList<>();
      fragmentation.freeCardsPerNode().forEach((free, count) ->
          histogram.add(MultiGauge.Row.of(Tags.of("free_cards", String.valueOf(free)), count)));
      freeCardsPerNode.register(histogram, true);
      wholeFreeNodes.set(fragmentation.wholeFreeNodes());
      largestPlaceable.set(fragmentation.largestPlaceableTask());
      updateHeartbeats(counts.result());
      leaderTerm.set(leader.result().getJsonObject("leader").getLong("term", 0L));
      return null;
    });
  }

  private Future<List<CardCounts>> sweep(String after, List<CardCounts> swept) {
    return nodes.cardCounts(after, PAGE_NODES).compose(page -> {
      swept.addAll(page);
      if (page.stream().map(CardCounts::nodeId).distinct().count() < PAGE_NODES) {
        return Future.succeededFuture(swept);
      }
      String last = page.get(page.size() - 1).nodeId();
      return vertx.timer(PAGE_PAUSE_MS).compose(v -> sweep(last, swept));
    });
  }

  private void updateHeartbeats(List<CardCounts> counts) {
    Map<String, Long> latest = new HashMap<>();
    for (CardCounts row : counts) {
      if (row.lastHeartbeatAt() != null) {
        latest.put(row.nodeId(), row.lastHeartbeatAt().toInstant().toEpochMilli());
      }
    }
    boolean sameNodes = latest.keySet().equals(lastHeartbeatMillis.keySet());
    lastHeartbeatMillis.putAll(latest);
    lastHeartbeatMillis.keySet().retainAll(latest.keySet());
    if (!sameNodes) {
      List<MultiGauge.Row<?>> ages = new ArrayList<>();
      latest.keySet().forEach(node -> ages.add(MultiGauge.Row.of(Tags.of("node", node), lastHeartbeatMillis,
          millis -> Math.max(0, Instant.now().toEpochMilli() - millis.getOrDefault(node, 0L)) / 1000.0)));
      heartbeatAge.register(ages, true);
    }
  }

  /** Per running service, {@code state} desired and running. */
  static List<MultiGauge.Row<?>> serviceRows(List<ServiceStore.ReplicaCount> counts) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (ServiceStore.ReplicaCount count : counts) {
      rows.add(MultiGauge.Row.of(Tags.of("service", count.name(), "tenant", count.tenant(), "state", "desired"),
          count.desired()));
      rows.add(MultiGauge.Row.of(Tags.of("service", count.name(), "tenant", count.tenant(), "state", "running"),
          count.running()));
    }
    return rows;
  }

  /** Per queue, its whole subtree's use (a parent's includes its children's), guaranteed and max. */
  static List<MultiGauge.Row<?>> queueRows(List<QueueRecord> tree, Map<String, QueueStore.Usage> own) {
    Map<String, String> parents = new HashMap<>();
    tree.forEach(queue -> parents.put(queue.name(), queue.parent()));
    Map<String, double[]> subtree = new HashMap<>();
    own.forEach((name, use) -> {
      for (String up = name; up != null; up = parents.get(up)) {
        double[] sum = subtree.computeIfAbsent(up, k -> new double[4]);
        sum[0] += use.gpuEq();
        sum[1] += use.active();
        sum[2] += use.pending();
        sum[3] += use.running();
      }
    });
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    for (QueueRecord queue : tree) {
      double[] sum = subtree.getOrDefault(queue.name(), new double[4]);
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "gpu_eq_used"), sum[0]));
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "active_tasks"), sum[1]));
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "pending_tasks"), sum[2]));
      // the task counts by state: pending as above, running (started on their agent; active_tasks also counts
      // scheduled, stopping and preempting)
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "pending"), sum[2]));
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "running"), sum[3]));
      rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "gpu_eq_guaranteed"), queue.guaranteed()));
      if (queue.maxGpuEq() != null) {
        rows.add(MultiGauge.Row.of(Tags.of("queue", queue.name(), "measure", "gpu_eq_max"), queue.maxGpuEq()));
      }
    }
    return rows;
  }

  private List<MultiGauge.Row<?>> cardRows(List<CardCounts> counts) {
    Map<List<String>, long[]> byModel = new HashMap<>();
    long shards = 0;
    for (CardCounts row : counts) {
      if (row.total() == 0) {
        continue;
      }
      long[] totalUsedFree = byModel.computeIfAbsent(List.of(String.valueOf(row.vendor()),
          String.valueOf(row.model())), key -> new long[3]);
      totalUsedFree[0] += row.total();
      totalUsedFree[1] += row.used();
      totalUsedFree[2] += Fragmentation.schedulable(row.status()) ? row.free() : 0;
      shards += row.shardMemoryMb();
    }
    shardMemory.set(shards);
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    byModel.forEach((key, values) -> {
      String[] states = {"total", "used", "free"};
      for (int i = 0; i < states.length; i++) {
        rows.add(MultiGauge.Row.of(Tags.of("vendor", key.get(0), "model", key.get(1), "state", states[i]), values[i]));
      }
    });
    return rows;
  }
}
