package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
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
 * or refused alone when it is malformed.
 */
final class HeartbeatWriter {
  private static final Logger LOG = Logger.getLogger(HeartbeatWriter.class.getName());
  /** At most this many heartbeats per transaction (5,000 nodes every 2 s arrive as a few batches). */
  private static final int MAX_BATCH = 1000;
  /** A running task its restarted agent has not reported in this many heartbeats in a row is lost. */
  static final int MISSES_LOST = 2;
  private final Pool pool;
  private final SelfFormingBatches<JsonObject, NodeStore.HeartbeatOutcome> batches =
      new SelfFormingBatches<>(heartbeat -> heartbeat.getString("node_id"), MAX_BATCH, this::writeAll);

  HeartbeatWriter(Pool pool) {
    this.pool = pool;
  }

  Future<NodeStore.HeartbeatOutcome> submit(JsonObject heartbeat) {
    return batches.submit(heartbeat);
  }

  /**
   * The batch in one transaction; if that fails, each heartbeat alone, so a malformed one (a value PostgreSQL
   * refuses) fails only itself, with an {@link IllegalArgumentException}. Then the running tasks of the
   * restarted agents among the applied heartbeats are counted (see {@link Sql#COUNT_AGENT_MISSES}).
   */
  private Future<List<Future<NodeStore.HeartbeatOutcome>>> writeAll(List<JsonObject> beats) {
    Future<List<Future<Boolean>>> applied = write(beats)
        .<List<Future<Boolean>>>map(ids -> beats.stream().map(beat -> Future.succeededFuture(ids.contains(id(beat))))
            .toList())
        .recover(failure -> Future.succeededFuture(beats.size() == 1 ? List.of(Future.failedFuture(refusal(failure)))
            : beats.stream().map(beat -> write(List.of(beat)).map(ids -> ids.contains(id(beat)))
                .recover(alone -> Future.failedFuture(refusal(alone)))).toList()));
    return applied.compose(each -> Future.join(each).transform(ignored -> {
      List<JsonObject> fresh = new ArrayList<>();
      for (int i = 0; i < beats.size(); i++) {
        if (each.get(i).succeeded() && each.get(i).result() && beats.get(i).getValue("active_tasks") != null) {
          fresh.add(beats.get(i));
        }
      }
      return countMisses(fresh).map(lost -> {
        List<Future<NodeStore.HeartbeatOutcome>> outcomes = new ArrayList<>();
        for (int i = 0; i < beats.size(); i++) {
          List<UUID> lostHere = lost.getOrDefault(id(beats.get(i)), List.of());
          outcomes.add(each.get(i).map(won -> new NodeStore.HeartbeatOutcome(won, lostHere)));
        }
        return outcomes;
      });
    }));
  }

  private static String id(JsonObject beat) {
    return beat.getString("node_id");
  }

  /** A heartbeat PostgreSQL or the column mapping refused as malformed: the sender's fault (400), not ours. */
  private static Throwable refusal(Throwable failure) {
    boolean malformed = failure instanceof ClassCastException || failure instanceof IllegalArgumentException
        || failure instanceof PgException pg && pg.getSqlState() != null
        && (pg.getSqlState().startsWith("22") || pg.getSqlState().startsWith("23"));
    return malformed ? new IllegalArgumentException("heartbeat refused: " + failure.getMessage(), failure) : failure;
  }

  /**
   * The running tasks lost by restarted agents, per node (counted {@link #MISSES_LOST} times or more). A
   * failed count loses nothing: it answers none and the next heartbeat counts again.
   */
  private Future<Map<String, List<UUID>>> countMisses(List<JsonObject> beats) {
    if (beats.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    Tuple params = Tuple.tuple().addArrayOfString(beats.stream().map(HeartbeatWriter::id).toArray(String[]::new))
        .addArrayOfString(beats.stream().map(beat -> beat.getJsonArray("active_tasks").encode()).toArray(String[]::new));
    return pool.preparedQuery(Sql.COUNT_AGENT_MISSES).execute(params).<Map<String, List<UUID>>>map(rows -> {
      Map<String, List<UUID>> lost = new HashMap<>();
      rows.forEach(row -> {
        if (row.getInteger("agent_misses") >= MISSES_LOST) {
          lost.computeIfAbsent(row.getString("node_id"), k -> new ArrayList<>()).add(row.getUUID("id"));
        }
      });
      return lost;
    }).recover(e -> {
      LOG.log(Level.FINE, "counting the tasks restarted agents did not report failed", e);
      return Future.succeededFuture(Map.of());
    });
  }

  /** One transaction for the batch; answers the ids of the nodes whose heartbeat was applied. */
  private Future<Set<String>> write(List<JsonObject> beats) {
    Tuple nodes;
    try {
      nodes = nodeColumns(beats);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return pool.withTransaction(conn -> conn.query(Sql.ASYNC_COMMIT).execute()
        .compose(v -> conn.preparedQuery(Sql.UPSERT_NODE_HEARTBEATS).execute(nodes))
        .compose(rows -> {
          Set<String> applied = new HashSet<>();
          rows.forEach(row -> applied.add(row.getString(0)));
          List<JsonObject> fresh = beats.stream().filter(beat -> applied.contains(beat.getString("node_id"))).toList();
          if (fresh.isEmpty()) {
            return Future.succeededFuture(applied);
          }
          return conn.preparedQuery(Sql.UPSERT_CARDS).execute(cardColumns(fresh))
              .compose(v -> conn.preparedQuery(Sql.DELETE_CARDS_BEYOND).execute(Tuple.tuple()
                  .addArrayOfString(fresh.stream().map(beat -> beat.getString("node_id")).toArray(String[]::new))
                  .addArrayOfInteger(fresh.stream().map(beat -> cards(beat).size()).toArray(Integer[]::new))))
              .map(applied);
        }));
  }

  private static JsonArray cards(JsonObject heartbeat) {
    return heartbeat.getJsonArray("cards", new JsonArray());
  }

  private static Tuple nodeColumns(List<JsonObject> beats) {
    Function<Function<JsonObject, String>, String[]> strings = field -> beats.stream().map(field).toArray(String[]::new);
    Function<JsonObject, JsonObject> location = beat -> beat.getJsonObject("location", new JsonObject());
    return Tuple.tuple()
        .addArrayOfString(strings.apply(beat -> beat.getString("node_id")))
        .addArrayOfString(strings.apply(beat -> beat.getString("gpu_vendor")))
        .addArrayOfInteger(beats.stream().map(beat -> beat.getInteger("cpu_cores", 0)).toArray(Integer[]::new))
        .addArrayOfDouble(beats.stream().map(beat -> beat.getDouble("cpu_percent", 0.0)).toArray(Double[]::new))
        .addArrayOfDouble(beats.stream().map(beat -> beat.getDouble("memory_total_gb", 0.0)).toArray(Double[]::new))
        .addArrayOfLong(beats.stream().map(beat -> beat.getLong("memory_used_mb", 0L)).toArray(Long[]::new))
        .addArrayOfInteger(beats.stream().map(beat -> cards(beat).size()).toArray(Integer[]::new))
        .addArrayOfString(strings.apply(beat -> beat.getJsonObject("labels", new JsonObject()).encode()))
        .addArrayOfString(strings.apply(beat -> beat.getString("topology")))
        .addArrayOfString(strings.apply(beat -> beat.getJsonArray("internal_ips", new JsonArray()).encode()))
        .addArrayOfString(strings.apply(beat -> beat.getString("boot_id")))
        .addArrayOfLong(beats.stream().map(beat -> beat.getLong("seq", 0L)).toArray(Long[]::new))
        .addArrayOfString(strings.apply(beat -> location.apply(beat).getString("region")))
        .addArrayOfString(strings.apply(beat -> location.apply(beat).getString("zone")))
        .addArrayOfString(strings.apply(beat -> location.apply(beat).getString("rack")))
        .addArrayOfString(strings.apply(beat -> beat.getString("dedicated_tenant")));
  }

  private static Tuple cardColumns(List<JsonObject> beats) {
    Map<String, List<Object>> columns = new HashMap<>();
    for (String column : List.of("node", "index", "uuid", "model", "total", "used", "util", "temp", "numa")) {
      columns.put(column, new ArrayList<>());
    }
    for (JsonObject beat : beats) {
      JsonArray reported = cards(beat);
      Map<Integer, JsonObject> byIndex = new LinkedHashMap<>(); // one row per card: a repeated index, the last wins
      for (int i = 0; i < reported.size(); i++) {
        byIndex.put(reported.getJsonObject(i).getInteger("index", i), reported.getJsonObject(i));
      }
      for (Map.Entry<Integer, JsonObject> entry : byIndex.entrySet()) {
        JsonObject card = entry.getValue();
        columns.get("node").add(beat.getString("node_id"));
        columns.get("index").add(entry.getKey());
        columns.get("uuid").add(card.getString("uuid"));
        columns.get("model").add(card.getString("model"));
        columns.get("total").add(card.getLong("memory_total_mb", 0L));
        columns.get("used").add(card.getLong("memory_used_mb", 0L));
        columns.get("util").add(card.getInteger("utilization_percent", 0));
        columns.get("temp").add(card.getInteger("temperature_c", 0));
        columns.get("numa").add(card.getInteger("numa_node"));
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
