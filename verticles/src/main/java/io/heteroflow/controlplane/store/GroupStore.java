package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.gang.NetworkDomains;
import io.heteroflow.controlplane.store.BindChecks.Rejected;
import io.heteroflow.protocol.message.Run;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Task groups in PostgreSQL (SPEC §9): created with their members in one transaction, bound all or nothing in
 * one transaction ({@link #bind}), moved by CAS on their version. A restart is a new attempt: fresh member tasks
 * copied from the last attempt's, so a terminal task stays terminal and the allocation history stays exact.
 */
public final class GroupStore {
  private final Pool pool;
  private final BatchBindStore binds;

  public GroupStore(Pool pool, BatchBindStore binds) {
    this.pool = pool;
    this.binds = binds;
  }

  /** A group and the members of its current attempt, in rank order. */
  public record Group(GroupRecord group, List<TaskRecord> members) {
  }

  /** Where a pass over the group queue stands (priority, created_at, id of the last group scanned). */
  public record Cursor(int priority, OffsetDateTime createdAt, UUID id) {
  }

  /** A bind's outcome: bound with where rank 0 listens, or refused (fenced: the term has passed). */
  public record Bound(boolean bound, String masterAddr, Integer masterPort, String backend, int domains,
                      List<BindStore.Outcome> members, Map<String, Long> nodeVersions, ReasonCode code, String message,
                      boolean fenced) {
    static Bound refused(BindStore.Outcome outcome) {
      return new Bound(false, null, null, null, 0, List.of(), Map.of(), outcome.code(), outcome.message(),
          outcome.fenced());
    }

    /** Another binder or a stop got to the group first: back off silently. */
    public boolean lostClaim() {
      return !bound && code == ReasonCode.BindConflict && message == null;
    }
  }

  public Future<Group> create(String tenant, GroupSpec spec) {
    UUID id = UUID.randomUUID();
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.INSERT_GROUP)
        .execute(Tuple.tuple().addUUID(id).addString(tenant).addString(spec.name()).addString(spec.type())
            .addString(spec.gpuType()).addString(spec.parallelism()).addInteger(spec.priority())
            .addInteger(spec.members().size()).addInteger(spec.maxRestarts()).addString(spec.queue()))
        .compose(inserted -> {
          List<Tuple> members = new ArrayList<>();
          UUID[] ids = new UUID[spec.members().size()];
          for (int rank = 0; rank < ids.length; rank++) {
            TaskSpec member = spec.members().get(rank);
            ids[rank] = UUID.randomUUID();
            members.add(Tuple.tuple().addUUID(ids[rank]).addString(tenant).addString(member.name())
                .addString(member.type()).addInteger(member.priority()).addBoolean(member.preemptible())
                .addInteger(member.gpuRequired()).addLong(member.gpuMemoryMb()).addString(member.gpuType())
                .addValue(member.toSpecJson()).addDouble(member.cpuCores()).addLong(member.memoryMb()).addUUID(id)
                .addInteger(rank).addString(spec.queue()));
          }
          return conn.preparedQuery(Sql.INSERT_MEMBER).executeBatch(members)
              .compose(v -> conn.preparedQuery(Sql.INSERT_CREATED_EVENTS).execute(Tuple.tuple().addArrayOfUUID(ids)
                  .addString("created as a member of group " + id)))
              .compose(v -> membersOf(conn, List.of(id)))
              .map(all -> new Group(GroupRecord.from(inserted.iterator().next()), all.getOrDefault(id, List.of())));
        }));
  }

  public Future<Optional<Group>> get(UUID id) {
    return pool.withConnection(conn -> conn.preparedQuery(Sql.GROUP_BY_ID).execute(Tuple.of(id)).compose(rows -> {
      if (rows.size() == 0) {
        return Future.succeededFuture(Optional.<Group>empty());
      }
      GroupRecord group = GroupRecord.from(rows.iterator().next());
      return membersOf(conn, List.of(id)).map(all -> Optional.of(new Group(group, all.getOrDefault(id, List.of()))));
    }));
  }

  /** Newest first; {@code tenant} null for every tenant's. */
  public Future<List<GroupRecord>> list(String tenant, int limit) {
    return pool.preparedQuery(Sql.GROUPS_FILTERED).execute(Tuple.of(tenant, limit))
        .map(rows -> {
          List<GroupRecord> groups = new ArrayList<>();
          rows.forEach(row -> groups.add(GroupRecord.from(row)));
          return groups;
        });
  }

  /** Up to {@code limit} pending groups in queue order after {@code cursor} (from the head when null). */
  public Future<List<Group>> pending(Cursor cursor, int limit) {
    Tuple params = Tuple.tuple().addInteger(cursor == null ? null : cursor.priority())
        .addOffsetDateTime(cursor == null ? null : cursor.createdAt()).addUUID(cursor == null ? null : cursor.id())
        .addInteger(limit);
    return groupsWithMembers(Sql.PENDING_GROUPS, params);
  }

  /** Groups whose members are placed or stopping: what the lifecycle watches. */
  public Future<List<Group>> unfinished(int limit) {
    return groupsWithMembers(Sql.UNFINISHED_GROUPS, Tuple.of(limit));
  }

  private Future<List<Group>> groupsWithMembers(String query, Tuple params) {
    return pool.withConnection(conn -> conn.preparedQuery(query).execute(params).compose(rows -> {
      List<GroupRecord> groups = new ArrayList<>();
      rows.forEach(row -> groups.add(GroupRecord.from(row)));
      if (groups.isEmpty()) {
        return Future.succeededFuture(List.<Group>of());
      }
      return membersOf(conn, groups.stream().map(GroupRecord::id).toList()).map(members -> groups.stream()
          .map(group -> new Group(group, members.getOrDefault(group.id(), List.of()))).toList());
    }));
  }

  private static Future<Map<UUID, List<TaskRecord>>> membersOf(SqlConnection conn, List<UUID> ids) {
    return conn.preparedQuery(Sql.MEMBERS_OF_GROUPS).execute(Tuple.tuple().addArrayOfUUID(ids.toArray(new UUID[0])))
        .map(rows -> {
          Map<UUID, List<TaskRecord>> members = new LinkedHashMap<>();
          rows.forEach(row -> members.computeIfAbsent(row.getUUID("group_id"), k -> new ArrayList<>())
              .add(TaskRecord.from(row)));
          return members;
        });
  }

  /**
   * Binds every member of the group's current attempt ({@code members} in rank order) or none, in one transaction
   * under the leader's fence: the members' bind (every check of a batch bind; the first refusal rolls all back),
   * the network domains of their nodes read in the same transaction, each member's distributed environment, and
   * the group's CAS pending → scheduled with rank 0's address and master port (rank 0's own, reserved on its node
   * by the master port index while the group runs).
   */
  public Future<Bound> bind(GroupRecord group, List<BindStore.Request> members, LeaderStore.Fence fence) {
    return pool.withTransaction(conn -> binds.bindAllOrNothing(conn, members, fence).compose(bound -> {
      String[] nodeIds = members.stream().map(BindStore.Request::nodeId).distinct().toArray(String[]::new);
      return conn.preparedQuery(Sql.NODE_ADDRESSES).execute(Tuple.tuple().addArrayOfString(nodeIds))
          .compose(rows -> wire(conn, group, members, bound, addresses(rows)));
    })).recover(failure -> {
      BindStore.Outcome refused = BindChecks.refusal(failure);
      return refused == null ? Future.failedFuture(failure) : Future.succeededFuture(Bound.refused(refused));
    });
  }

  private static Future<Bound> wire(SqlConnection conn, GroupRecord group, List<BindStore.Request> members,
                                    BatchBindStore.Result bound, Map<String, NetworkDomains.NodeAddresses> nodes) {
    List<NetworkDomains.NodeAddresses> ranks = members.stream().map(member -> nodes.get(member.nodeId())).toList();
    boolean usesCards = members.stream().anyMatch(member -> !member.gpuIndices().isEmpty() || member.shard() != null);
    NetworkDomains.Wiring wiring = NetworkDomains.wire(ranks, usesCards);
    if (wiring.problem() != null) {
      throw new Rejected(ReasonCode.NoSchedulableNodes, wiring.problem());
    }
    int masterPort = bound.outcomes().get(0).masterPort();
    UUID[] ids = new UUID[members.size()];
    String[] json = new String[members.size()];
    for (int rank = 0; rank < ids.length; rank++) {
      ids[rank] = members.get(rank).taskId();
      json[rank] = new Run.Distributed(group.id(), members.size(), rank, wiring.masterAddr(), masterPort,
          wiring.backend()).toJson().encode();
    }
    Future<RowSet<Row>> env = conn.preparedQuery(Sql.SET_MEMBERS_DISTRIBUTED)
        .execute(Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(json));
    Future<RowSet<Row>> claimed = conn.preparedQuery(Sql.CAS_GROUP_BOUND).execute(Tuple.tuple().addUUID(group.id())
        .addInteger(group.restartCount()).addString(members.get(0).nodeId()).addString(wiring.masterAddr())
        .addInteger(masterPort).addString(wiring.backend()).addInteger(wiring.domains()));
    return Future.all(env, claimed).map(done -> {
      if (claimed.result().rowCount() != 1) {
        throw new Rejected(ReasonCode.BindConflict, null);
      }
      return new Bound(true, wiring.masterAddr(), masterPort, wiring.backend(), wiring.domains(), bound.outcomes(),
          bound.nodeVersions(), null, null, false);
    });
  }

  /** Each node's addresses and labels as placement sees them (admin labels win over the agent's). */
  private static Map<String, NetworkDomains.NodeAddresses> addresses(RowSet<Row> rows) {
    Map<String, NetworkDomains.NodeAddresses> nodes = new HashMap<>();
    for (Row row : rows) {
      Map<String, String> labels = TaskRecord.stringMap((JsonObject) row.getValue("labels"));
      nodes.put(row.getString("id"), new NetworkDomains.NodeAddresses(row.getString("id"), row.getString("gpu_vendor"),
          labels, strings(row.getValue("internal_ips")), strings(row.getValue("public_ips"))));
    }
    return nodes;
  }

  private static List<String> strings(Object column) {
    List<String> values = new ArrayList<>();
    if (column instanceof JsonArray array) {
      array.forEach(value -> values.add(String.valueOf(value)));
    }
    return values;
  }

  /** A pending group's reason (GangIncomplete with counts), on the group, its members and their ledger. */
  public Future<Void> setReason(UUID groupId, String code, String message) {
    return pool.preparedQuery(Sql.SET_GROUP_REASON).execute(Tuple.of(groupId, code, message)).mapEmpty();
  }

  /** A group whose members were all preempted goes back to the queue as it is (no restart is used). */
  public Future<Optional<GroupRecord>> requeuePreempted(GroupRecord group, String message) {
    return pool.preparedQuery(Sql.CAS_GROUP_PREEMPTED).execute(Tuple.of(group.id(), group.version(), "Preempted",
        message)).map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(GroupRecord.from(rows.iterator().next())));
  }

  /**
   * CAS of the group from the version read to {@code to}. Back to pending is a restart: the next attempt's
   * members are created in the same transaction. Empty when the group moved meanwhile.
   */
  public Future<Optional<GroupRecord>> move(GroupRecord group, String to, String ending, String code, String message) {
    Tuple params = Tuple.tuple().addUUID(group.id()).addLong(group.version()).addString(to).addString(ending)
        .addString(code).addString(message);
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.CAS_GROUP_STATUS).execute(params).compose(rows -> {
      if (rows.size() == 0) {
        return Future.succeededFuture(Optional.<GroupRecord>empty());
      }
      GroupRecord moved = GroupRecord.from(rows.iterator().next());
      Future<Void> follow = Future.succeededFuture();
      if (GroupRecord.PENDING.equals(to)) {
        follow = conn.preparedQuery(Sql.INSERT_NEXT_ATTEMPT).execute(Tuple.of(group.id(), group.restartCount()))
            .compose(created -> {
              List<UUID> ids = new ArrayList<>();
              created.forEach(row -> ids.add(row.getUUID("id")));
              return conn.preparedQuery(Sql.INSERT_CREATED_EVENTS).execute(Tuple.tuple()
                  .addArrayOfUUID(ids.toArray(new UUID[0])).addString("created by restart " + moved.restartCount()
                      + " of group " + group.id())).mapEmpty();
            });
      } else if (GroupRecord.STOPPED.equals(to)) {
        follow = conn.preparedQuery(Sql.STOP_PENDING_MEMBERS)
            .execute(Tuple.of(group.id(), group.restartCount(), code, message)).mapEmpty();
      }
      return follow.map(Optional.of(moved));
    }));
  }
}
