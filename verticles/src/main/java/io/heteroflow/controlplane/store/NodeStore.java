package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Beat;
import io.heteroflow.protocol.message.Heartbeat;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/** Nodes and their cards: heartbeats in (newest sequence wins), snapshots and API views out. */
public final class NodeStore {
  private final Pool pool;
  private final HeartbeatWriter heartbeats;
  private final LeaseWriter leases;
  /** A silent node whose agent's control plane is gone gets this much longer before it is marked offline. */
  public static final int RECONNECT_GRACE_SECONDS = 30;
  /** A control plane not seen (control_planes.last_seen, written every half second) for this long is gone. */
  static final double CONTROL_PLANE_GONE_SECONDS = 3;

  public NodeStore(Pool pool) {
    this(pool, null);
  }

  /** The node store of control plane {@code via} (null: unknown), which the heartbeats it writes came through. */
  public NodeStore(Pool pool, String via) {
    this.pool = pool;
    AgentMisses misses = new AgentMisses(pool);
    this.heartbeats = new HeartbeatWriter(pool, misses, via);
    this.leases = new LeaseWriter(pool, misses, via);
  }

  /**
   * Applies one agent heartbeat (schema in docs/event-bus.md) idempotently: a heartbeat with a sequence not
   * newer than the stored one of the same agent boot changes nothing. Answers whether it was applied. A
   * heartbeat is soft state, re-sent every 2 s, so its transaction commits without waiting for the WAL flush
   * (a crash loses at most the last fraction of a second of heartbeats, never a bind or a task transition),
   * and heartbeats arriving together share one transaction ({@link HeartbeatWriter}): at 5,000 nodes that keeps
   * 2,500 commits a second off the database the binds commit on.
   */
  public Future<Boolean> applyHeartbeat(Heartbeat heartbeat) {
    return heartbeat(heartbeat).map(HeartbeatOutcome::applied);
  }

  /**
   * A heartbeat's outcome: whether it was applied, and the running tasks its node's restarted agent has now
   * failed to report in two heartbeats in a row (lost with the old agent: for the caller to settle).
   */
  public record HeartbeatOutcome(boolean applied, List<LostTask> lostTasks) {
  }

  /** A running task its node's agent did not report in two heartbeats: lost in a restart, or forgotten by it. */
  public record LostTask(UUID id, boolean restarted) {
  }

  /**
   * {@link #applyHeartbeat}, answering the tasks a restarted agent lost too. A heartbeat of another agent process
   * (boot id) while the node is held by a live one fails with {@link NodeHeldException}, nothing written: the
   * node's holder is the boot whose heartbeats are applied, for as long as its last heartbeat is younger than the
   * hold window (6 s) and it has not {@link #release released} the node. PostgreSQL decides, in the heartbeat's
   * own upsert.
   */
  public Future<HeartbeatOutcome> heartbeat(Heartbeat heartbeat) {
    return heartbeats.submit(heartbeat);
  }

  /**
   * A liveness-only beat: renews the node's lease (V19 node_leases) when {@code beat}'s boot holds the node, the
   * node is online and the beat is newer than its lease; answers whether it did, with the running tasks its agent
   * has now failed to report twice (as {@link #heartbeat}). The node row is not written, so a beat costs the
   * scheduler nothing (it rereads only nodes whose row changed).
   */
  public Future<HeartbeatOutcome> beat(Beat beat) {
    return leases.submit(beat);
  }

  /**
   * The agent process {@code bootId} lets go of node {@code nodeId} (a clean shutdown), so another boot's next
   * heartbeat takes the node over at once. Answers whether {@code bootId} is the node's holder (only then is
   * anything written); repeating a release changes nothing more.
   */
  public Future<Boolean> release(String nodeId, String bootId) {
    return pool.preparedQuery(Sql.RELEASE_NODE).execute(Tuple.of(nodeId, bootId)).map(rows -> rows.size() == 1);
  }

  /** A node whose real-time ledger disagreed with the heartbeat ledger, and the value it was corrected to. */
  public record LedgerCorrection(String nodeId, int recorded, int actual) {
  }

  /**
   * The heartbeat ledger (SPEC §3): recomputes each node's {@code gpu_used} as SUM(gpu_required) of its active
   * tasks and corrects the real-time ledger where they differ. A cheap read finds suspects; each is then
   * recomputed under the node's row lock, which every bind and release also takes first, so a correction
   * never races a bind in flight.
   */
  public Future<List<LedgerCorrection>> reconcileLedger() {
    return pool.query(Sql.LEDGER_SUSPECTS).execute().compose(suspects -> {
      List<Future<LedgerCorrection>> checks = new ArrayList<>();
      suspects.forEach(row -> checks.add(recompute(row.getString("id"))));
      return Future.all(checks).map(all -> {
        List<LedgerCorrection> corrections = new ArrayList<>();
        for (Future<LedgerCorrection> check : checks) {
          if (check.result() != null) {
            corrections.add(check.result());
          }
        }
        return corrections;
      });
    });
  }

  private Future<LedgerCorrection> recompute(String nodeId) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.LOCK_NODE).execute(Tuple.of(nodeId))
        .compose(locked -> conn.preparedQuery(Sql.LEDGER_TRUTH).execute(Tuple.of(nodeId)).compose(truth -> {
          int recorded = locked.iterator().next().getInteger("gpu_used");
          int actual = truth.iterator().next().getLong("s").intValue();
          if (recorded == actual) {
            return Future.succeededFuture((LedgerCorrection) null);
          }
          return conn.preparedQuery(Sql.LEDGER_CORRECT).execute(Tuple.of(nodeId, actual))
              .map(new LedgerCorrection(nodeId, recorded, actual));
        })));
  }

  /** The outcome of an offline sweep: the nodes marked offline, or that every node was silent at once. */
  public record Sweep(List<String> markedOffline, boolean everyNodeSilent) {
  }

  /**
   * Marks nodes whose last sign of life (a heartbeat or a beat, receipt time, database clock) is older than the
   * grace period offline. A node whose last sign came through a control plane that is gone itself (killed, say)
   * gets {@link #RECONNECT_GRACE_SECONDS} more: its agent is reconnecting to another control plane, and marking it
   * offline would treat a control-plane failover as the loss of its nodes. When every live node (two or more) is
   * silent at once, nothing is marked: that is a disruption on the control plane's side (a pause, a partition, a
   * restart), not a fleet that died together.
   */
  public Future<Sweep> markSilentNodesOffline(int graceSeconds) {
    Tuple grace = Tuple.of((double) graceSeconds, (double) RECONNECT_GRACE_SECONDS, CONTROL_PLANE_GONE_SECONDS);
    return pool.preparedQuery(Sql.SILENCE).execute(grace).compose(counts -> {
      Row row = counts.iterator().next();
      long live = row.getLong("live");
      long silent = row.getLong("silent");
      if (silent == 0) {
        return Future.succeededFuture(new Sweep(List.of(), false));
      }
      if (live >= 2 && silent == live) {
        return Future.succeededFuture(new Sweep(List.of(), true));
      }
      return pool.preparedQuery(Sql.MARK_SILENT_NODES_OFFLINE).execute(grace).map(rows -> {
        List<String> ids = new ArrayList<>();
        rows.forEach(marked -> ids.add(marked.getString("id")));
        return new Sweep(ids, false);
      });
    });
  }

  public Future<List<NodeRecord>> all() {
    return load(null);
  }

  /** Every node's cards counted per model by PostgreSQL (one statement, a row per node and model). */
  public Future<List<CardCounts>> cardCounts() {
    return cardCounts("", null);
  }

  /** The same for at most {@code limit} nodes (null: all) after {@code afterNodeId}, in id order. */
  public Future<List<CardCounts>> cardCounts(String afterNodeId, Integer limit) {
    return pool.preparedQuery(Sql.CARD_COUNTS).execute(Tuple.of(afterNodeId, limit)).map(rows -> {
      List<CardCounts> counts = new ArrayList<>(rows.size());
      rows.forEach(row -> counts.add(new CardCounts(row.getString("id"), row.getString("gpu_vendor"),
          row.getString("status"), row.getInteger("gpu_total"), row.getOffsetDateTime("last_heartbeat_at"),
          row.getString("model"), row.getInteger("total"), row.getInteger("used"), row.getInteger("free"),
          row.getLong("shard_mb"))));
      return counts;
    });
  }

  public Future<Optional<NodeRecord>> get(String nodeId) {
    return load(nodeId).map(nodes -> nodes.stream().findFirst());
  }

  public Future<List<NodeInfo>> snapshotNodes() {
    return all().map(records -> records.stream().map(NodeRecord::info).toList());
  }

  /** The share-group memberships as a tenant boundary; a failed read fails the caller (fail closed). */
  public Future<TenantBoundary> tenantBoundary() {
    return pool.query(Sql.SHARE_MEMBERSHIPS).execute().map(NodeStore::boundaryOf);
  }

  static TenantBoundary boundaryOf(RowSet<Row> memberships) {
    List<Map.Entry<String, String>> pairs = new ArrayList<>();
    memberships.forEach(row -> pairs.add(Map.entry(row.getString("group_name"), row.getString("tenant"))));
    return TenantBoundary.ofMemberships(pairs);
  }

  public Future<Boolean> setLocation(String nodeId, String region, String zone, String rack) {
    return pool.preparedQuery(Sql.SET_NODE_LOCATION).execute(Tuple.of(nodeId, region, zone, rack))
        .map(rows -> rows.size() == 1);
  }

  public Future<Boolean> setLabels(String nodeId, JsonObject labels) {
    return pool.preparedQuery(Sql.SET_NODE_LABELS).execute(Tuple.of(nodeId, labels)).map(rows -> rows.size() == 1);
  }

  /**
   * Cordons a node ({@code drain}: and marks it draining) or, with {@code cordoned} false, uncordons it and ends
   * a drain. Bumps the node's version so the scheduler's snapshot reads it. Answers whether the node exists.
   */
  public Future<Boolean> setCordon(String nodeId, boolean cordoned, boolean drain) {
    return pool.preparedQuery(Sql.SET_NODE_CORDON).execute(Tuple.of(nodeId, cordoned, drain))
        .map(rows -> rows.size() == 1);
  }

  /** The outcome of setting a node's dedicated tenant: the node exists, and the tenant does. */
  public enum DedicatedOutcome { SET, UNKNOWN_NODE, UNKNOWN_TENANT }

  /**
   * An admin's dedicated tenant for a node ({@code tenant} null: dedicated to nobody). It is stored as an
   * override: from now on heartbeats never change the node's dedicated tenant, whatever the agent reports.
   */
  public Future<DedicatedOutcome> setDedicated(String nodeId, String tenant) {
    return pool.preparedQuery(Sql.SET_NODE_DEDICATED).execute(Tuple.of(nodeId, tenant)).map(rows -> {
      Row known = rows.iterator().next();
      return !known.getBoolean("node_known") ? DedicatedOutcome.UNKNOWN_NODE
          : !known.getBoolean("tenant_known") ? DedicatedOutcome.UNKNOWN_TENANT : DedicatedOutcome.SET;
    });
  }

  /** The active tasks on a node (scheduled, running, stopping, preempting), by id. */
  public Future<Map<UUID, TaskStatus>> activeTasks(String nodeId) {
    return pool.preparedQuery(Sql.ACTIVE_TASKS_ON_NODE).execute(Tuple.of(nodeId)).map(rows -> {
      Map<UUID, TaskStatus> tasks = new LinkedHashMap<>();
      rows.forEach(row -> tasks.put(row.getUUID("id"), TaskStatus.fromWire(row.getString("status"))));
      return tasks;
    });
  }

  private Future<List<NodeRecord>> load(String nodeId) {
    Future<RowSet<Row>> nodes = nodeId == null ? pool.query(Sql.NODES).execute()
        : pool.preparedQuery(Sql.NODE_BY_ID).execute(Tuple.of(nodeId));
    Future<RowSet<Row>> cards = pool.preparedQuery(Sql.CARDS).execute(Tuple.of(nodeId));
    Future<RowSet<Row>> allocations = pool.preparedQuery(Sql.ACTIVE_ALLOCATIONS).execute(Tuple.of(nodeId));
    return Future.all(nodes, cards, allocations).map(all -> assemble(nodes.result(), cards.result(), allocations.result()));
  }

  /**
   * What changed since a watermark, as of one moment: the versions of the nodes written since ({@code versions};
   * every node on a first read), the scheduler's view of those asked for, how many nodes exist, and the
   * watermark for the next read.
   */
  public record NodeChanges(Map<String, Long> versions, List<NodeInfo> nodes, long nodeCount, long watermark) {
  }

  /**
   * The nodes written since {@code watermark} (all of them when it is negative), and the full view of those
   * whose version differs from {@code known} (or that are new) and of {@code reread}, except those in
   * {@code skip}, all in one repeatable-read transaction so versions and views agree. A transaction running
   * when the watermark was taken is caught by the next read however late it commits: the watermark is the
   * oldest transaction id the snapshot still saw running. Every write that matters to scheduling bumps a
   * node's version. {@code known} is read on the caller's context, when the versions arrive.
   */
  public Future<NodeChanges> changedNodes(long watermark, Map<String, Long> known, Set<String> reread,
                                          Set<String> skip) {
    return pool.withTransaction(conn -> {
      conn.query(Sql.REPEATABLE_READ).execute(); // pipelined with the scans; a failure fails them too
      Future<RowSet<Row>> written = watermark < 0 ? conn.query(Sql.NODE_VERSIONS).execute()
          : conn.preparedQuery(Sql.NODES_WRITTEN_SINCE).execute(Tuple.of(String.valueOf(watermark & 0xFFFF_FFFFL)));
      Future<RowSet<Row>> next = conn.query(Sql.NODE_WATERMARK).execute();
      return Future.all(written, next).compose(scanned -> {
        Row mark = next.result().iterator().next();
        Map<String, Long> versions = new HashMap<>();
        Set<String> changed = new HashSet<>();
        for (Row row : written.result()) {
          String id = row.getString(0);
          long version = row.getLong(1);
          versions.put(id, version);
          if (!Long.valueOf(version).equals(known.get(id)) && !skip.contains(id)) {
            changed.add(id);
          }
        }
        reread.stream().filter(id -> !skip.contains(id)).forEach(changed::add);
        if (changed.isEmpty()) {
          return Future.succeededFuture(new NodeChanges(versions, List.of(), mark.getLong("nodes"),
              mark.getLong("xmin")));
        }
        Tuple ids = Tuple.of(changed.toArray(new String[0]));
        Future<RowSet<Row>> nodes = conn.preparedQuery(Sql.NODES_AMONG).execute(ids);
        Future<RowSet<Row>> cards = conn.preparedQuery(Sql.CARDS_AMONG).execute(ids);
        Future<RowSet<Row>> allocations = conn.preparedQuery(Sql.ACTIVE_ALLOCATIONS_ON_NODES).execute(ids);
        return Future.all(nodes, cards, allocations).map(read -> {
          nodes.result().forEach(row -> versions.putIfAbsent(row.getString("id"), row.getLong("version")));
          return new NodeChanges(versions, assemble(nodes.result(), cards.result(), allocations.result()).stream()
              .map(NodeRecord::info).toList(), mark.getLong("nodes"), mark.getLong("xmin"));
        });
      });
    });
  }

  private static List<NodeRecord> assemble(RowSet<Row> nodes, RowSet<Row> cards, RowSet<Row> allocations) {
    Map<String, List<Row>> cardsByNode = new HashMap<>();
    cards.forEach(card -> cardsByNode.computeIfAbsent(card.getString("node_id"), k -> new ArrayList<>()).add(card));
    Map<String, Map<Integer, CardUse>> useByNode = new HashMap<>();
    for (Row allocation : allocations) {
      Map<Integer, CardUse> use = useByNode.computeIfAbsent(allocation.getString("node_id"), k -> new HashMap<>());
      int index = allocation.getInteger("gpu_index");
      CardUse before = use.getOrDefault(index, CardUse.NONE);
      Set<String> tenants = new HashSet<>(before.tenants());
      tenants.add(allocation.getString("tenant"));
      boolean whole = "whole".equals(allocation.getString("kind"));
      use.put(index, new CardUse(before.wholeTasks() + (whole ? 1 : 0), before.shards() + (whole ? 0 : 1),
          before.shardMemoryMb() + (whole ? 0 : allocation.getLong("memory_mb")), tenants));
    }
    List<NodeRecord> records = new ArrayList<>();
    for (Row row : nodes) {
      String id = row.getString("id");
      records.add(toRecord(row, cardsByNode.getOrDefault(id, List.of()), useByNode.getOrDefault(id, Map.of())));
    }
    return records;
  }

  /** The active replicas per service on a node ({@code {"<service uuid>": count}}). */
  private static Map<String, Integer> serviceReplicas(Object value) {
    Map<String, Integer> replicas = new HashMap<>();
    if (value instanceof JsonObject object) {
      object.forEach(entry -> replicas.put(entry.getKey(), ((Number) entry.getValue()).intValue()));
    }
    return replicas;
  }

  private static NodeRecord toRecord(Row row, List<Row> cardRows, Map<Integer, CardUse> use) {
    List<CardInfo> cards = new ArrayList<>();
    Map<Integer, String> uuids = new HashMap<>();
    for (Row card : cardRows) {
      int index = card.getInteger("gpu_index");
      cards.add(new CardInfo(index, card.getString("model"), card.getLong("memory_total_mb"),
          card.getLong("memory_used_mb"), card.getInteger("utilization_percent"), card.getInteger("temperature_c"),
          card.getInteger("numa_node")));
      if (card.getString("uuid") != null) {
        uuids.put(index, card.getString("uuid"));
      }
    }
    NodeInfo info = new NodeInfo(row.getString("id"), row.getString("gpu_vendor"), row.getString("status"),
        row.getBoolean("executable"), row.getString("dedicated_tenant"), row.getString("region"),
        row.getString("zone"), row.getString("rack"), TaskRecord.stringMap((JsonObject) row.getValue("labels")),
        row.getString("topology"), row.getInteger("cpu_cores"), row.getDouble("cpu_percent"),
        row.getDouble("memory_total_gb"), row.getLong("memory_used_mb"), row.getInteger("gpu_total"),
        row.getInteger("gpu_used"), row.getDouble("cpu_allocated"), row.getLong("memory_allocated_mb"),
        row.getLong("inference_tasks").intValue(), cards, use, row.getBoolean("cordoned"),
        serviceReplicas(row.getValue("service_replicas")));
    Object ips = row.getValue("internal_ips");
    Object publicIps = row.getValue("public_ips");
    return new NodeRecord(info, row.getOffsetDateTime("last_heartbeat_at"),
        ips instanceof JsonArray array ? array : new JsonArray(),
        publicIps instanceof JsonArray array ? array : new JsonArray(), uuids, row.getBoolean("draining"),
        row.getBoolean("dedicated_by_admin"));
  }
}
