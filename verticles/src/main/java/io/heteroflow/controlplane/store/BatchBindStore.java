package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.store.BindChecks.Occupant;
import io.heteroflow.controlplane.store.BindChecks.Rejected;
import io.heteroflow.controlplane.store.BindStore.Outcome;
import io.heteroflow.controlplane.store.BindStore.Request;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Binds many decided tasks in one transaction with a fixed number of statements, whatever the batch size, sent
 * pipelined (two round trips besides BEGIN / COMMIT):
 * lock the batch's nodes (in id order) and its still-pending tasks, read their cards, occupants and ports,
 * re-check every request in order against those live rows plus the requests admitted before it (the same
 * checks as {@link BindStore}), then write the admitted ones set-based: allocations, node accounting,
 * ledger, events, and last the task CAS, which stamps {@code scheduled_at} from the clock. Every admitted task
 * gets the lowest free port of the node's master port range (an inference task also a host port). A request
 * that fails a check gets its own refusal and the rest still bind. PostgreSQL's constraints stay the last word:
 * if one refuses the batch (a card or port taken behind our back), the transaction rolls back and every request
 * is retried alone with {@link BindStore}.
 */
public final class BatchBindStore {
  private final Pool pool;
  private final BindChecks checks;
  private final BindStore single;
  private final QueueingConfig queueing;

  public BatchBindStore(Pool pool, SchedulerConfig config, BindStore single) {
    this.pool = pool;
    this.queueing = config.queueing();
    this.checks = new BindChecks(config);
    this.single = single;
  }

  /**
   * One outcome per request, in request order, and the version each node the batch wrote on has now (a node
   * written by nobody else meanwhile has exactly the staged view of the binds that bound there).
   */
  public record Result(List<Outcome> outcomes, Map<String, Long> nodeVersions) {
  }

  public Future<Result> bind(List<Request> requests, LeaderStore.Fence fence) {
    if (requests.isEmpty()) {
      return Future.succeededFuture(new Result(List.of(), Map.of()));
    }
    return pool.withTransaction(conn -> bindIn(conn, requests, fence)).recover(failure -> {
      Outcome refused = BindChecks.refusal(failure);
      if (refused == null) {
        return Future.failedFuture(failure);
      }
      if (refused.fenced()) {
        return Future.succeededFuture(new Result(Collections.nCopies(requests.size(), refused), Map.of()));
      }
      List<Future<Outcome>> alone = requests.stream().map(request -> single.bind(request, fence)).toList();
      return Future.all(alone).map(all -> new Result(alone.stream().map(Future::result).toList(), Map.of()));
    });
  }

  /**
   * Binds every request or none, inside the caller's transaction (a task group's members, SPEC §9): the same
   * locks and checks as a batch, but the first refusal fails the whole transaction with that refusal.
   */
  Future<Result> bindAllOrNothing(SqlConnection conn, List<Request> requests, LeaderStore.Fence fence) {
    return bindIn(conn, requests, fence, true);
  }

  private Future<Result> bindIn(SqlConnection conn, List<Request> requests, LeaderStore.Fence fence) {
    return bindIn(conn, requests, fence, false);
  }

  private Future<Result> bindIn(SqlConnection conn, List<Request> requests, LeaderStore.Fence fence,
                                boolean allOrNothing) {
    Set<String> nodeSet = new TreeSet<>();
    requests.forEach(request -> nodeSet.add(request.nodeId()));
    String[] nodeIds = nodeSet.toArray(new String[0]);
    UUID[] taskIds = requests.stream().map(Request::taskId).toArray(UUID[]::new);
    boolean shards = requests.stream().anyMatch(request -> request.shard() != null);
    // the reads go out pipelined (one round trip); PostgreSQL runs them in order: fence, nodes, then tasks
    Future<Void> fenced = LeaderStore.checkFence(conn, fence);
    Future<RowSet<Row>> nodes = conn.preparedQuery(Sql.LOCK_NODES).execute(Tuple.of(nodeIds));
    Future<RowSet<Row>> tasks = conn.preparedQuery(Sql.LOCK_PENDING_TASKS).execute(Tuple.of(taskIds));
    Future<RowSet<Row>> cards = conn.preparedQuery(Sql.CARDS_OF_NODES).execute(Tuple.of(nodeIds));
    Future<RowSet<Row>> occupants = conn.preparedQuery(Sql.ACTIVE_ALLOCATIONS_ON_NODES).execute(Tuple.of(nodeIds));
    Future<RowSet<Row>> ports = conn.preparedQuery(Sql.PORTS_IN_USE_ON_NODES).execute(Tuple.of(nodeIds));
    Future<RowSet<Row>> chains = conn.preparedQuery(Sql.QUEUE_CHAINS).execute(Tuple.of(taskIds));
    Future<TenantBoundary> boundary = shards ? conn.query(Sql.SHARE_MEMBERSHIPS).execute().map(NodeStore::boundaryOf)
        : Future.succeededFuture(TenantBoundary.ISOLATED);
    return Future.all(List.of(fenced, nodes, tasks, cards, occupants, ports, boundary, chains))
        .map(read -> {
          Live live = new Live();
          nodes.result().forEach(row -> live.nodes.put(row.getString("id"), new NodeLoad(row)));
          tasks.result().forEach(row -> live.tasks.put(row.getUUID("id"), row));
          cards.result().forEach(row -> live.cards.put(cardKey(row.getString("node_id"), row.getInteger("gpu_index")), row));
          occupants.result().forEach(row ->
              live.occupants(row.getString("node_id"), row.getInteger("gpu_index")).add(Occupant.of(row)));
          ports.result().forEach(row -> {
            Set<Integer> held = live.ports(row.getString("node_id"));
            held.add(row.getInteger("host_port"));
            held.add(row.getInteger("master_port"));
          });
          return live;
        })
        .compose(live -> QuotaCheck.read(conn, chains.result(), queueing, live.tasks.values().stream()
            .anyMatch(task -> "training".equals(task.getString("type")))).map(quota -> {
          live.quota = quota;
          return live;
        }))
        .compose(live -> {
          List<Outcome> outcomes = new ArrayList<>();
          List<Admitted> admitted = new ArrayList<>();
          for (Request request : requests) {
            try {
              Admitted one = admit(request, live, boundary.result());
              admitted.add(one);
              outcomes.add(new Outcome(true, one.port(), one.masterPort(), null, null, false));
            } catch (Rejected rejected) {
              if (allOrNothing) {
                throw rejected;
              }
              outcomes.add(rejected.outcome());
            }
          }
          return write(conn, admitted, live, fence).map(versions -> new Result(outcomes, versions));
        });
  }

  /** The rows the batch locked and read, updated as requests are admitted. */
  private static final class Live {
    final Map<String, NodeLoad> nodes = new HashMap<>();
    final Map<UUID, Row> tasks = new HashMap<>();
    final Map<String, Row> cards = new HashMap<>();
    final Map<String, List<Occupant>> occupants = new HashMap<>();
    /** Ports held by active tasks on each node: host ports and master ports (their ranges do not overlap). */
    final Map<String, Set<Integer>> ports = new HashMap<>();
    /** The batch's queues' limits and use, staged as requests are admitted. */
    QuotaCheck quota;

    List<Occupant> occupants(String nodeId, int index) {
      return occupants.computeIfAbsent(cardKey(nodeId, index), key -> new ArrayList<>());
    }

    Set<Integer> ports(String nodeId) {
      return ports.computeIfAbsent(nodeId, key -> new HashSet<>());
    }
  }

  /** A locked node row and what the batch has accounted on it so far. */
  private static final class NodeLoad {
    final Row row;
    int gpuUsed;
    double cpuAllocated;
    long memoryAllocatedMb;

    NodeLoad(Row row) {
      this.row = row;
      this.gpuUsed = row.getInteger("gpu_used");
      this.cpuAllocated = row.getDouble("cpu_allocated");
      this.memoryAllocatedMb = row.getLong("memory_allocated_mb");
    }

    boolean fits(int cards, double cpu, long memoryMb) {
      return gpuUsed + cards <= row.getInteger("gpu_total") && cpuAllocated + cpu <= row.getInteger("cpu_cores") + 0.000001
          && memoryAllocatedMb + memoryMb <= row.getDouble("memory_total_gb") * 1024;
    }
  }

  /** An admitted request; {@code borrowedFrom}: the lender whose idle guarantee a training task binds on. */
  private record Admitted(Request request, String tenant, double cpuCores, long memoryMb, Integer port,
                          int masterPort, String borrowedFrom) {
  }

  private static String cardKey(String nodeId, int index) {
    return nodeId + '#' + index;
  }

  /** Re-checks one request against the live rows and stages it there; throws Rejected when it cannot bind. */
  private Admitted admit(Request request, Live live, TenantBoundary boundary) {
    String nodeId = request.nodeId();
    NodeLoad node = live.nodes.get(nodeId);
    if (node == null) {
      throw new Rejected(ReasonCode.NoSchedulableNodes, "node " + nodeId + " is gone");
    }
    checks.node(nodeId, node.row);
    Row task = live.tasks.remove(request.taskId());
    if (task == null) {
      throw new Rejected(ReasonCode.BindConflict, null);
    }
    ShardAssignment shard = request.shard();
    List<Integer> touched = new ArrayList<>(request.gpuIndices());
    if (shard != null) {
      touched.add(shard.cardIndex());
    }
    for (int index : touched) {
      Row card = live.cards.get(cardKey(nodeId, index));
      if (card == null) {
        throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " no longer reports those cards");
      }
      checks.card(nodeId, card);
      if (shard == null) {
        BindChecks.wholeCardFree(live.occupants(nodeId, index));
      } else {
        checks.shard(nodeId, shard, task.getString("tenant"), card.getLong("memory_total_mb"),
            live.occupants(nodeId, index), boundary);
      }
    }
    int cards = request.gpuIndices().size();
    double cpu = task.getDouble("cpu_cores");
    long memoryMb = task.getLong("memory_mb");
    if (!node.fits(cards, cpu, memoryMb)) {
      throw new Rejected(ReasonCode.InsufficientResources, "node " + nodeId + " cannot account " + cards
          + " more cards, " + cpu + " CPU cores and " + memoryMb + " MB");
    }
    Integer port = "inference".equals(task.getString("type")) ? checks.freePort(nodeId, live.ports(nodeId)) : null;
    int masterPort = checks.freeMasterPort(nodeId, live.ports(nodeId));
    String borrowedFrom = live.quota.admit(task.getString("queue"), task.getString("type"),
        gpuEquivalents(request, live));
    // every check passed: stage the request so the ones after it see it
    node.gpuUsed += cards;
    node.cpuAllocated += cpu;
    node.memoryAllocatedMb += memoryMb;
    String tenant = task.getString("tenant");
    request.gpuIndices().forEach(index -> live.occupants(nodeId, index).add(new Occupant("whole", 0, tenant)));
    if (shard != null) {
      live.occupants(nodeId, shard.cardIndex()).add(new Occupant("shard", shard.memoryMb(), tenant));
    }
    if (port != null) {
      live.ports(nodeId).add(port);
    }
    live.ports(nodeId).add(masterPort);
    return new Admitted(request, tenant, cpu, memoryMb, port, masterPort, borrowedFrom);
  }

  /** What the request holds in GPU-equivalents: each whole card its model's factor, a shard its memory's share. */
  private static double gpuEquivalents(Request request, Live live) {
    double need = 0;
    for (int index : request.gpuIndices()) {
      need += live.quota.factor(live.cards.get(cardKey(request.nodeId(), index)).getString("model"));
    }
    ShardAssignment shard = request.shard();
    if (shard != null) {
      Row card = live.cards.get(cardKey(request.nodeId(), shard.cardIndex()));
      need += live.quota.factor(card.getString("model")) * shard.memoryMb()
          / (double) Math.max(1, card.getLong("memory_total_mb"));
    }
    return need;
  }

  /** The admitted requests' writes, set-based; a count that does not match rolls the batch back. */
  private static Future<Map<String, Long>> write(SqlConnection conn, List<Admitted> admitted, Live live,
                                                 LeaderStore.Fence fence) {
    if (admitted.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    int n = admitted.size();
    UUID[] ids = new UUID[n];
    String[] nodes = new String[n];
    String[] indices = new String[n];
    Integer[] ports = new Integer[n];
    Integer[] masterPorts = new Integer[n];
    String[] shards = new String[n];
    String[] messages = new String[n];
    String[] lenders = new String[n];
    AllocationRows allocations = new AllocationRows();
    Set<String> touched = new TreeSet<>();
    List<String> ledgerNodes = new ArrayList<>();
    List<UUID> ledgerTasks = new ArrayList<>();
    List<Integer> ledgerDeltas = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Admitted one = admitted.get(i);
      Request request = one.request();
      ids[i] = request.taskId();
      nodes[i] = request.nodeId();
      indices[i] = request.gpuIndices().toString().replace('[', '{').replace(']', '}');
      ports[i] = one.port();
      masterPorts[i] = one.masterPort();
      lenders[i] = one.borrowedFrom();
      shards[i] = request.shard() == null ? null : request.shard().toWire().toJson().encode();
      messages[i] = BindChecks.boundMessage(request.nodeId(), request.gpuIndices(), request.shard(), one.port());
      allocations.add(request, one.tenant());
      touched.add(request.nodeId());
      if (!request.gpuIndices().isEmpty()) {
        ledgerNodes.add(request.nodeId());
        ledgerTasks.add(request.taskId());
        ledgerDeltas.add(request.gpuIndices().size());
      }
    }
    Tuple cas = Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(nodes).addArrayOfString(indices)
        .addArrayOfInteger(ports).addArrayOfString(shards).addLong(fence == null ? null : fence.term())
        .addArrayOfInteger(masterPorts).addArrayOfString(lenders);
    // the writes go out pipelined too; a count that does not match rolls everything back. The task CAS goes
    // last: it stamps scheduled_at from the clock, so the stamp includes all the bind's work but the commit
    Future<RowSet<Row>> allocated = conn.preparedQuery(Sql.BATCH_INSERT_ALLOCATIONS).execute(allocations.tuple());
    Future<RowSet<Row>> accounted = conn.preparedQuery(Sql.BATCH_ADD_ACCOUNTED).execute(accounting(touched, live));
    Future<RowSet<Row>> ledger = conn.preparedQuery(Sql.BATCH_INSERT_LEDGER).execute(Tuple.tuple()
        .addArrayOfString(ledgerNodes.toArray(new String[0])).addArrayOfUUID(ledgerTasks.toArray(new UUID[0]))
        .addArrayOfInteger(ledgerDeltas.toArray(new Integer[0])));
    Future<RowSet<Row>> events = conn.preparedQuery(Sql.BATCH_INSERT_BIND_EVENTS)
        .execute(Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(messages));
    Future<RowSet<Row>> claimed = conn.preparedQuery(Sql.BATCH_CAS_BIND).execute(cas);
    return Future.all(List.of(claimed, allocated, accounted, ledger, events)).map(written -> {
      expect(claimed.result(), n, ReasonCode.BindConflict, "a task of the batch changed state while locked");
      expect(accounted.result(), touched.size(), ReasonCode.InsufficientResources,
          "a node refused the batch's accounting");
      Map<String, Long> versions = new HashMap<>();
      accounted.result().forEach(row -> versions.put(row.getString(0), row.getLong(1)));
      return versions;
    });
  }

  /** What the admitted requests add to each touched node: its staged totals less the locked row's. */
  private static Tuple accounting(Set<String> touched, Live live) {
    List<NodeLoad> loads = touched.stream().map(live.nodes::get).toList();
    return Tuple.tuple().addArrayOfString(touched.toArray(new String[0]))
        .addArrayOfInteger(loads.stream().map(load -> load.gpuUsed - load.row.getInteger("gpu_used")).toArray(Integer[]::new))
        .addArrayOfDouble(loads.stream().map(load -> load.cpuAllocated - load.row.getDouble("cpu_allocated"))
            .toArray(Double[]::new))
        .addArrayOfLong(loads.stream().map(load -> load.memoryAllocatedMb - load.row.getLong("memory_allocated_mb"))
            .toArray(Long[]::new));
  }

  private static void expect(RowSet<Row> rows, int expected, ReasonCode code, String message) {
    if (rows.rowCount() != expected) {
      throw new Rejected(code, message);
    }
  }

  /** The allocation rows of the batch as parallel arrays: a row per whole card, one per shard. */
  private static final class AllocationRows {
    final List<UUID> tasks = new ArrayList<>();
    final List<String> nodes = new ArrayList<>();
    final List<Integer> cards = new ArrayList<>();
    final List<String> kinds = new ArrayList<>();
    final List<Long> memory = new ArrayList<>();
    final List<String> tenants = new ArrayList<>();

    void add(Request request, String tenant) {
      request.gpuIndices().forEach(index -> row(request, tenant, index, "whole", 0));
      if (request.shard() != null) {
        row(request, tenant, request.shard().cardIndex(), "shard", request.shard().memoryMb());
      }
    }

    private void row(Request request, String tenant, int index, String kind, long memoryMb) {
      tenants.add(tenant);
      tasks.add(request.taskId());
      nodes.add(request.nodeId());
      cards.add(index);
      kinds.add(kind);
      memory.add(memoryMb);
    }

    Tuple tuple() {
      return Tuple.tuple().addArrayOfUUID(tasks.toArray(new UUID[0])).addArrayOfString(nodes.toArray(new String[0]))
          .addArrayOfInteger(cards.toArray(new Integer[0])).addArrayOfString(kinds.toArray(new String[0]))
          .addArrayOfLong(memory.toArray(new Long[0])).addArrayOfString(tenants.toArray(new String[0]));
    }
  }
}
