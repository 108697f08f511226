package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.Nomination;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Preemption in PostgreSQL (SPEC §6): what planning reads (the active tasks on nodes with candidate victims, the
 * live nominations) and the one transaction that carries a plan out — every victim to {@code preempting} by CAS
 * and the preemptor nominated, under the leader's fence, all or nothing. Settling a victim is the ordinary CAS
 * from {@code preempting} ({@link TaskStore#transition}), whoever confirms it.
 */
public final class PreemptionStore {
  /** How long a nomination outlives its slowest victim's allowed stop: one watchdog period and a round to bind. */
  public static final int NOMINATION_SLACK_SECONDS = 45;
  private final Pool pool;

  public PreemptionStore(Pool pool) {
    this.pool = pool;
  }

  /** A plan to carry out: the preemptor, its node, its victims, and the plan in words for the ledger. */
  /**
   * A plan to carry out: the preemptor, its node, its victims, and the plan in words for the ledger; a reclaim
   * (SPEC §13) names the preemptor's queue and what it needs in GPU-eq ({@code reclaimQueue} null: an ordinary
   * preemption, victims of lower priority only).
   */
  public record Plan(UUID preemptor, int priority, String nodeId, List<UUID> victims, String description,
                     String reclaimQueue, double reclaimNeed) {
    public Plan(UUID preemptor, int priority, String nodeId, List<UUID> victims, String description) {
      this(preemptor, priority, nodeId, victims, description, null, 0);
    }

    public boolean reclaim() {
      return reclaimQueue != null;
    }
  }

  public enum Outcome {
    /** The victims are preempting and the preemptor is nominated. */
    PREEMPTED,
    /** A victim or the preemptor moved on since the round read them: nothing was written. */
    STALE,
    /** This member no longer leads: nothing was written. */
    FENCED
  }

  /**
   * Every active task on the nodes holding a possible victim (preemptible, scheduled or running, not training or
   * inference) below {@code belowPriority}; which of them a plan may take is the planner's to say.
   */
  public Future<Map<String, List<Occupant>>> occupants(int belowPriority) {
    return occupants(belowPriority, List.of());
  }

  /**
   * {@link #occupants(int)}, with the nodes holding a possible victim of any priority in {@code reclaimFrom} (the
   * queues over their guarantee, when a task may reclaim, SPEC §13).
   */
  public Future<Map<String, List<Occupant>>> occupants(int belowPriority, java.util.Collection<String> reclaimFrom) {
    // Tuple.tuple(), not Tuple.of: an array given to Tuple.of(Object, Object...) would be spread as its elements
    return pool.preparedQuery(Sql.PREEMPTION_OCCUPANTS).execute(Tuple.tuple().addInteger(belowPriority)
        .addArrayOfString(reclaimFrom.toArray(new String[0]))).map(rows -> {
      Map<String, List<Occupant>> byNode = new HashMap<>();
      for (Row row : rows) {
        byNode.computeIfAbsent(row.getString("node_id"), k -> new ArrayList<>()).add(occupant(row));
      }
      return byNode;
    });
  }

  private static Occupant occupant(Row row) {
    Integer[] cards = row.getArrayOfIntegers("gpu_indices");
    Shard shard = Shard.fromJson((JsonObject) row.getValue("shard"));
    return new Occupant(row.getUUID("id"), row.getString("tenant"), row.getString("type"), row.getInteger("priority"),
        row.getBoolean("preemptible"), TaskStatus.fromWire(row.getString("status")),
        instant(row.getOffsetDateTime("created_at")), instant(row.getOffsetDateTime("started_at")),
        instant(row.getOffsetDateTime("last_checkpoint_at")), cards == null ? List.of() : List.of(cards),
        shard == null ? null : shard.cardIndex(), shard == null ? 0 : shard.memoryMb(), row.getDouble("cpu_cores"),
        row.getLong("memory_mb"), row.getUUID("group_id"), row.getString("queue"),
        row.getDouble("gpu_eq") == null ? 0.0 : row.getDouble("gpu_eq"));
  }

  private static java.time.Instant instant(OffsetDateTime at) {
    return at == null ? null : at.toInstant();
  }

  /** The nominations of pending tasks that have not expired. */
  public Future<List<Nomination>> liveNominations() {
    return pool.query(Sql.LIVE_NOMINATIONS).execute().map(rows -> {
      List<Nomination> live = new ArrayList<>(rows.size());
      rows.forEach(row -> live.add(new Nomination(row.getUUID("id"), row.getInteger("priority"),
          row.getString("nominated_node"), row.getString("reason_message"), row.getBoolean("waiting"))));
      return live;
    });
  }

  /**
   * Carries out {@code plan} in one transaction under {@code fence}: the victims (each still a possible victim
   * on that node) become preempting, the preemptor is nominated to the node until its slowest victim's stop
   * allowance (the watchdog's {@code watchdogSeconds} plus checkpoint and extra grace) and
   * {@link #NOMINATION_SLACK_SECONDS} have passed, and every one of them gets a ledger entry naming the others.
   */
  public Future<Outcome> preempt(Plan plan, int watchdogSeconds, LeaderStore.Fence fence) {
    return preemptOn(plan, watchdogSeconds, fence).map(Preempted::outcome);
  }

  /** What became of a plan, and on PREEMPTED the node of each victim (a task group's members may be elsewhere). */
  public record Preempted(Outcome outcome, Map<UUID, String> victimNodes) {
  }

  /** {@link #preempt}, answering where each victim runs, so each agent is told to stop its own. */
  public Future<Preempted> preemptOn(Plan plan, int watchdogSeconds, LeaderStore.Fence fence) {
    return pool.withTransaction(conn -> LeaderStore.checkFence(conn, fence)
            .compose(v -> preemptIn(conn, plan, watchdogSeconds)))
        .recover(failure -> failure instanceof LeaderStore.NotLeaderException
            ? Future.succeededFuture(new Preempted(Outcome.FENCED, Map.of()))
            : failure instanceof Stale ? Future.succeededFuture(new Preempted(Outcome.STALE, Map.of()))
            : Future.failedFuture(failure));
  }

  private static Future<Preempted> preemptIn(SqlConnection conn, Plan plan, int watchdogSeconds) {
    String victimMessage = (plan.reclaim() ? "reclaimed for queue " + plan.reclaimQueue() + ": " : "")
        + "preempted by task " + plan.preemptor() + " (priority " + plan.priority() + "); plan: "
        + plan.description();
    // a reclaim takes victims of any priority, so its guarantees are checked first, under the queues' locks
    Future<Boolean> guarantees = plan.reclaim()
        ? ReclaimCheck.holds(conn, plan.reclaimQueue(), plan.reclaimNeed(), plan.victims())
        : Future.succeededFuture(true);
    return guarantees.compose(holds -> holds ? Future.succeededFuture() : Future.failedFuture(new Stale()))
        .compose(v -> conn.preparedQuery(plan.reclaim() ? Sql.CAS_RECLAIM_VICTIMS : Sql.CAS_PREEMPT_VICTIMS)
        .execute(Tuple.of(plan.victims().toArray(new UUID[0]), plan.nodeId(), plan.priority(), victimMessage)))
        .compose(victims -> {
          if (victims.size() != plan.victims().size()) {
            return Future.failedFuture(new Stale()); // rolls the other victims back: the plan holds as a whole
          }
          double slowest = 0;
          List<UUID> ids = new ArrayList<>();
          List<String> from = new ArrayList<>();
          Map<UUID, String> nodes = new HashMap<>();
          for (Row victim : victims) {
            ids.add(victim.getUUID("id"));
            nodes.put(victim.getUUID("id"), victim.getString("node_id"));
            from.add(victim.getString("from_status"));
            slowest = Math.max(slowest, victim.getDouble("allowance"));
          }
          String pending = "nominated to node " + plan.nodeId() + " while its victims stop: " + plan.description();
          double term = watchdogSeconds + slowest + NOMINATION_SLACK_SECONDS;
          return conn.preparedQuery(Sql.NOMINATE).execute(Tuple.of(plan.preemptor(), plan.nodeId(), term, pending,
                  plan.victims().toArray(new UUID[0])))
              .compose(nominated -> {
                if (nominated.size() == 0) {
                  return Future.failedFuture(new Stale());
                }
                return events(conn, plan, ids, from, victimMessage, pending)
                    .map(v -> new Preempted(Outcome.PREEMPTED, nodes));
              });
        });
  }

  private static Future<Void> events(SqlConnection conn, Plan plan, List<UUID> victims, List<String> from,
                                     String victimMessage, String pending) {
    List<UUID> tasks = new ArrayList<>(victims);
    List<String> kinds = new ArrayList<>();
    List<String> to = new ArrayList<>();
    List<String> codes = new ArrayList<>();
    List<String> messages = new ArrayList<>();
    List<String> fromStates = new ArrayList<>(from);
    for (int i = 0; i < victims.size(); i++) {
      kinds.add("transition");
      to.add(TaskStatus.PREEMPTING.wire());
      codes.add("Preempting");
      messages.add(victimMessage);
    }
    tasks.add(plan.preemptor());
    kinds.add("preemption");
    fromStates.add(null);
    to.add(null);
    codes.add("PreemptionPending");
    messages.add(pending);
    return conn.preparedQuery(Sql.INSERT_PREEMPTION_EVENTS).execute(Tuple.of(tasks.toArray(new UUID[0]),
        kinds.toArray(new String[0]), fromStates.toArray(new String[0]), to.toArray(new String[0]),
        codes.toArray(new String[0]), messages.toArray(new String[0]))).mapEmpty();
  }

  /** A plan that no longer holds; only ever thrown inside the transaction, to roll it back. */
  private static final class Stale extends RuntimeException {
    Stale() {
      super("the plan no longer holds", null, false, false);
    }
  }
}
