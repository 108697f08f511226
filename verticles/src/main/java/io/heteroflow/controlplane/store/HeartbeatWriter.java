package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.heteroflow.protocol.message.Heartbeat;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Writes agent heartbeats in batches that form by themselves: a heartbeat arriving while a write is in flight
 * waits and goes with the next one, so a lone heartbeat is written at once and 2,500 a second (5,000 nodes)
 * become a few dozen transactions of four statements each (node upsert, card upsert, stale-card delete), set
 * based. A batch holds at most one heartbeat per node (a second one waits for the next batch: one statement
 * may not upsert a row twice). Each heartbeat keeps its own answer: applied, or not newer than the stored one,
 * or refused alone when it is malformed, or refused with {@link NodeHeldException} when another live agent
 * process holds its node (see {@link #HOLD_SECONDS}).
 */
final class HeartbeatWriter {
  private static final Logger LOG = Logger.getLogger(HeartbeatWriter.class.getName());
  /** At most this many heartbeats per transaction (5,000 nodes every 2 s arrive as a few batches). */
  private static final int MAX_BATCH = 1000;
  /**
   * The hold window: a node whose agent process (boot id) heartbeated less than this long ago, and has not
   * released it, refuses the heartbeats of another boot. Three heartbeat periods (2 s): a holder that misses
   * one or two heartbeats keeps its node; an agent killed and restarted at once takes over within 6 s of its
   * predecessor's last heartbeat (at once after a clean stop, which releases the node).
   */
  static final double HOLD_SECONDS = 6;
  private final Pool pool;
  private final AgentMisses misses;
  private final SelfFormingBatches<Heartbeat, NodeStore.HeartbeatOutcome> batches =
      new SelfFormingBatches<>(Heartbeat::nodeId, MAX_BATCH, this::writeAll);
  /** The control plane (control_planes.member_id) these heartbeats come through (V19 heartbeat_via), or null. */
  private final String via;

  HeartbeatWriter(Pool pool, AgentMisses misses, String via) {
    this.pool = pool;
    this.misses = misses;
    this.via = via;
  }

  Future<NodeStore.HeartbeatOutcome> submit(Heartbeat heartbeat) {
    return batches.submit(heartbeat);
  }

  /**
   * The batch in one transaction; if that fails, each heartbeat alone, so a malformed one (a value PostgreSQL
   * refuses) fails only itself, with an {@link IllegalArgumentException}. Then the running tasks of the
   * restarted agents among the applied heartbeats are counted (see {@link Sql#COUNT_AGENT_MISSES}).
   */
  private Future<List<Future<NodeStore.HeartbeatOutcome>>> writeAll(List<Heartbeat> beats) {
    Future<List<Future<Boolean>>> applied = write(beats)
        .<List<Future<Boolean>>>map(written -> beats.stream().map(written::answer).toList())
        .recover(failure -> Future.succeededFuture(beats.size() == 1 ? List.of(Future.failedFuture(refusal(failure)))
            : beats.stream().map(beat -> write(List.of(beat)).compose(written -> written.answer(beat))
                .recover(alone -> Future.failedFuture(refusal(alone)))).toList()));
    return applied.compose(each -> Future.join(each).transform(ignored -> {
      List<Heartbeat> fresh = new ArrayList<>();
      for (int i = 0; i < beats.size(); i++) {
        if (each.get(i).succeeded() && each.get(i).result() && beats.get(i).activeTasks() != null) {
          fresh.add(beats.get(i));
        }
      }
      return misses.count(fresh.stream().map(beat -> new AgentMisses.Reported(beat.nodeId(), beat.activeTasks()))
          .toList()).map(lost -> {
        List<Future<NodeStore.HeartbeatOutcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < beats.size(); i++) {
          List<NodeStore.LostTask> lostHere = lost.getOrDefault(id(beats.get(i)), List.of());
          outcomes.add(each.get(i).map(won -> new NodeStore.HeartbeatOutcome(won, lostHere)));
        }
        return outcomes;
      });
    }));
  }

  private static String id(Heartbeat beat) {
    return beat.nodeId();
  }

  /** A heartbeat PostgreSQL refused as malformed (a value out of range, a constraint): the sender's fault (400), not ours. */
  private static Throwable refusal(Throwable failure) {
    boolean malformed = failure instanceof PgException pg && pg.getSqlState() != null
        && (pg.getSqlState().startsWith("22") || pg.getSqlState().startsWith("23"));
    return malformed ? new IllegalArgumentException("heartbeat refused: " + failure.getMessage(), failure) : failure;
  }

  /**
   * What one transaction made of its heartbeats: the nodes whose heartbeat was applied, and the nodes whose
   * heartbeat was refused because another agent process holds them (the rest were not newer).
   */
  private record Written(Set<String> applied, Map<String, NodeHeldException> held) {
    Future<Boolean> answer(Heartbeat beat) {
      NodeHeldException refused = held.get(id(beat));
      return refused != null ? Future.failedFuture(refused) : Future.succeededFuture(applied.contains(id(beat)));
    }
  }

  /**
   * One transaction for the batch. The upsert decides, in its own condition, which heartbeats are applied and
   * which are refused as held; the rows it did not update stay locked until the commit, so the read of the
   * holders that follows sees the row versions the upsert decided on.
   */
  private Future<Written> write(List<Heartbeat> beats) {
    Tuple nodes = nodeColumns(beats).addDouble(HOLD_SECONDS).addString(via);
    return pool.withTransaction(conn -> conn.query(Sql.ASYNC_COMMIT).execute()
        .compose(v -> conn.preparedQuery(Sql.UPSERT_NODE_HEARTBEATS).execute(nodes))
        .compose(rows -> {
          Set<String> applied = new HashSet<>();
          rows.forEach(row -> applied.add(row.getString(0)));
          List<Heartbeat> fresh = beats.stream().filter(beat -> applied.contains(beat.nodeId())).toList();
          List<Heartbeat> unapplied = beats.stream().filter(beat -> !applied.contains(beat.nodeId())).toList();
          Future<Map<String, NodeHeldException>> held = unapplied.isEmpty() ? Future.succeededFuture(Map.of())
              : conn.preparedQuery(Sql.HELD_NODES).execute(Tuple.tuple()
                  .addArrayOfString(unapplied.stream().map(Heartbeat::nodeId).toArray(String[]::new))
                  .addArrayOfString(unapplied.stream().map(Heartbeat::bootId).toArray(String[]::new))
                  .addDouble(HOLD_SECONDS))
                  .map(holders -> {
                    Map<String, NodeHeldException> refused = new HashMap<>();
                    holders.forEach(row -> refused.put(row.getString("id"), new NodeHeldException(row.getString("id"),
                        row.getOffsetDateTime("held_since"), row.getDouble("silent_seconds"), HOLD_SECONDS)));
                    return refused;
                  });
          if (fresh.isEmpty()) {
            return held.map(refused -> new Written(applied, refused));
          }
          return held.compose(refused -> conn.preparedQuery(Sql.UPSERT_CARDS).execute(cardColumns(fresh))
              .compose(v -> conn.preparedQuery(Sql.DELETE_CARDS_BEYOND).execute(Tuple.tuple()
                  .addArrayOfString(fresh.stream().map(Heartbeat::nodeId).toArray(String[]::new))
                  .addArrayOfInteger(fresh.stream().map(beat -> beat.cards().size()).toArray(Integer[]::new))))
              .map(new Written(applied, refused)));
        }));
  }

  private static Tuple nodeColumns(List<Heartbeat> beats) {
    Function<Function<Heartbeat, String>, String[]> strings = field -> beats.stream().map(field).toArray(String[]::new);
    return Tuple.tuple()
        .addArrayOfString(strings.apply(Heartbeat::nodeId))
        .addArrayOfString(strings.apply(Heartbeat::gpuVendor))
        .addArrayOfInteger(beats.stream().map(Heartbeat::cpuCores).toArray(Integer[]::new))
        .addArrayOfDouble(beats.stream().map(Heartbeat::cpuPercent).toArray(Double[]::new))
        .addArrayOfDouble(beats.stream().map(Heartbeat::memoryTotalGb).toArray(Double[]::new))
        .addArrayOfLong(beats.stream().map(Heartbeat::memoryUsedMb).toArray(Long[]::new))
        .addArrayOfInteger(beats.stream().map(beat -> beat.cards().size()).toArray(Integer[]::new))
        .addArrayOfString(strings.apply(beat -> new JsonObject(Map.copyOf(beat.labels())).encode()))
        .addArrayOfString(strings.apply(Heartbeat::topology))
        .addArrayOfString(strings.apply(beat -> new JsonArray(beat.internalIps()).encode()))
        .addArrayOfString(strings.apply(Heartbeat::bootId))
        .addArrayOfLong(beats.stream().map(Heartbeat::seq).toArray(Long[]::new))
        .addArrayOfString(strings.apply(beat -> beat.location().region()))
        .addArrayOfString(strings.apply(beat -> beat.location().zone()))
        .addArrayOfString(strings.apply(beat -> beat.location().rack()))
        .addArrayOfString(strings.apply(Heartbeat::dedicatedTenant))
        .addArrayOfString(strings.apply(beat -> new JsonArray(beat.publicIps()).encode()));
  }

  private static Tuple cardColumns(List<Heartbeat> beats) {
    Map<String, List<Object>> columns = new HashMap<>();
    for (String column : List.of("node", "index", "uuid", "model", "total", "used", "util", "temp", "numa")) {
      columns.put(column, new ArrayList<>());
    }
    for (Heartbeat beat : beats) {
      Map<Integer, Heartbeat.Card> byIndex = new LinkedHashMap<>(); // one row per card: a repeated index, the last wins
      for (int i = 0; i < beat.cards().size(); i++) {
        Heartbeat.Card card = beat.cards().get(i);
        byIndex.put(card.index() == null ? i : card.index(), card);
      }
      for (Map.Entry<Integer, Heartbeat.Card> entry : byIndex.entrySet()) {
        Heartbeat.Card card = entry.getValue();
        columns.get("node").add(beat.nodeId());
        columns.get("index").add(entry.getKey());
        columns.get("uuid").add(card.uuid());
        columns.get("model").add(card.model());
        columns.get("total").add(card.memoryTotalMb());
        columns.get("used").add(card.memoryUsedMb());
        columns.get("util").add(card.utilizationPercent());
        columns.get("temp").add(card.temperatureC());
        columns.get("numa").add(card.numaNode());
      }
    }
    return Tuple.tuple().addArrayOfString(columns.get("node").toArray(new String[0]))
        .addArrayOfInteger(columns.get("index").toArray(new Integer[0]))
        .addArrayOfString(columns.get("uuid").toArray(new String[0]))
        .addArrayOfString(columns.get("model").toArray(new String[0]))
        .addArrayOfLong(columns.get("total").toArray(new Long[0]))
        .addArrayOfLong(columns.get("used").toArray(new Long[0]))
        .addArrayOfInteger(columns.get("util").toArray(new Integer[0]))
        .addArrayOfInteger(columns.get("temp").toArray(new Integer[0]))
        .addArrayOfInteger(columns.get("numa").toArray(new Integer[0]));
  }
}
