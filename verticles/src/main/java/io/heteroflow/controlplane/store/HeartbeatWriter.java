package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Writes agent heartbeats in batches that form by themselves: a heartbeat arriving while a write is in flight
 * waits and goes with the next one, so a lone heartbeat is written at once and 2,500 a second (5,000 nodes)
 * become a few dozen transactions of four statements each (node upsert, card upsert, stale-card delete), set
 * based. A batch holds at most one heartbeat per node (a second one waits for the next batch: one statement
 * may not upsert a row twice). Each heartbeat keeps its own answer: applied, or not newer than the stored one.
 */
final class HeartbeatWriter {
  /** At most this many heartbeats per transaction (5,000 nodes every 2 s arrive as a few batches). */
  private static final int MAX_BATCH = 1000;
  private final Pool pool;
  private final SelfFormingBatches<JsonObject, Boolean> batches =
      new SelfFormingBatches<>(heartbeat -> heartbeat.getString("node_id"), MAX_BATCH, this::writeAll);

  HeartbeatWriter(Pool pool) {
    this.pool = pool;
  }

  Future<Boolean> submit(JsonObject heartbeat) {
    return batches.submit(heartbeat);
  }

  private Future<List<Future<Boolean>>> writeAll(List<JsonObject> beats) {
    return write(beats).map(applied -> beats.stream()
        .map(beat -> Future.succeededFuture(applied.contains(beat.getString("node_id")))).toList());
  }

  /** One transaction for the batch; answers the ids of the nodes whose heartbeat was applied. */
  private Future<Set<String>> write(List<JsonObject> beats) {
    return pool.withTransaction(conn -> conn.query(Sql.ASYNC_COMMIT).execute()
        .compose(v -> conn.preparedQuery(Sql.UPSERT_NODE_HEARTBEATS).execute(nodeColumns(beats)))
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
