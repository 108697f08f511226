package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Nodes and their cards: heartbeats in (newest sequence wins), snapshots and API views out. */
public final class NodeStore {
  private final Pool pool;

  public NodeStore(Pool pool) {
    this.pool = pool;
  }

  /**
   * Applies one agent heartbeat (schema in docs/event-bus.md) idempotently: a heartbeat with a sequence not
   * newer than the stored one of the same agent boot changes nothing. Answers whether it was applied.
   */
  public Future<Boolean> applyHeartbeat(JsonObject heartbeat) {
    String nodeId = heartbeat.getString("node_id");
    JsonArray cards = heartbeat.getJsonArray("cards", new JsonArray());
    JsonObject location = heartbeat.getJsonObject("location", new JsonObject());
    Tuple node = Tuple.tuple().addString(nodeId).addString(heartbeat.getString("gpu_vendor"))
        .addInteger(heartbeat.getInteger("cpu_cores", 0)).addDouble(heartbeat.getDouble("cpu_percent", 0.0))
        .addDouble(heartbeat.getDouble("memory_total_gb", 0.0)).addLong(heartbeat.getLong("memory_used_mb", 0L))
        .addInteger(cards.size()).addValue(heartbeat.getJsonObject("labels", new JsonObject()))
        .addString(heartbeat.getString("topology")).addValue(heartbeat.getJsonArray("internal_ips", new JsonArray()))
        .addString(heartbeat.getString("boot_id")).addLong(heartbeat.getLong("seq", 0L))
        .addString(location.getString("region")).addString(location.getString("zone"))
        .addString(location.getString("rack"));
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.UPSERT_NODE_HEARTBEAT).execute(node).compose(applied -> {
      if (applied.size() == 0) {
        return Future.succeededFuture(false);
      }
      List<Tuple> batch = new ArrayList<>();
      for (int i = 0; i < cards.size(); i++) {
        JsonObject card = cards.getJsonObject(i);
        batch.add(Tuple.tuple().addString(nodeId).addInteger(card.getInteger("index", i)).addString(card.getString("uuid"))
            .addString(card.getString("model")).addLong(card.getLong("memory_total_mb", 0L))
            .addLong(card.getLong("memory_used_mb", 0L)).addInteger(card.getInteger("utilization_percent", 0))
            .addInteger(card.getInteger("temperature_c", 0)).addInteger(card.getInteger("numa_node")));
      }
      Future<?> upserted = batch.isEmpty() ? Future.succeededFuture()
          : conn.preparedQuery(Sql.UPSERT_CARD).executeBatch(batch);
      return upserted.compose(v -> conn.preparedQuery(Sql.DELETE_CARDS_FROM).execute(Tuple.of(nodeId, cards.size())))
          .map(true);
    }));
  }

  /** Marks nodes whose last heartbeat (receipt time, database clock) is older than the grace period offline. */
  public Future<List<String>> markSilentNodesOffline(int graceSeconds) {
    return pool.preparedQuery(Sql.MARK_SILENT_NODES_OFFLINE).execute(Tuple.of((double) graceSeconds)).map(rows -> {
      List<String> ids = new ArrayList<>();
      rows.forEach(row -> ids.add(row.getString("id")));
      return ids;
    });
  }

  public Future<List<NodeRecord>> all() {
    return load(null);
  }

  public Future<Optional<NodeRecord>> get(String nodeId) {
    return load(nodeId).map(nodes -> nodes.stream().findFirst());
  }

  public Future<List<NodeInfo>> snapshotNodes() {
    return all().map(records -> records.stream().map(NodeRecord::info).toList());
  }

  public Future<Boolean> setLocation(String nodeId, String region, String zone, String rack) {
    return pool.preparedQuery(Sql.SET_NODE_LOCATION).execute(Tuple.of(nodeId, region, zone, rack))
        .map(rows -> rows.size() == 1);
  }

  public Future<Boolean> setLabels(String nodeId, JsonObject labels) {
    return pool.preparedQuery(Sql.SET_NODE_LABELS).execute(Tuple.of(nodeId, labels)).map(rows -> rows.size() == 1);
  }

  private Future<List<NodeRecord>> load(String nodeId) {
    Future<io.vertx.sqlclient.RowSet<Row>> nodes = nodeId == null ? pool.query(Sql.NODES).execute()
        : pool.preparedQuery(Sql.NODE_BY_ID).execute(Tuple.of(nodeId));
    return nodes.compose(nodeRows -> pool.preparedQuery(Sql.CARDS_WITH_OCCUPANCY).execute(Tuple.of(nodeId))
        .map(cardRows -> {
          Map<String, List<Row>> cardsByNode = new HashMap<>();
          cardRows.forEach(card -> cardsByNode.computeIfAbsent(card.getString("node_id"), k -> new ArrayList<>()).add(card));
          List<NodeRecord> records = new ArrayList<>();
          for (Row row : nodeRows) {
            records.add(toRecord(row, cardsByNode.getOrDefault(row.getString("id"), List.of())));
          }
          return records;
        }));
  }

  private static NodeRecord toRecord(Row row, List<Row> cardRows) {
    List<CardInfo> cards = new ArrayList<>();
    Map<Integer, Integer> tasksPerCard = new HashMap<>();
    Map<Integer, String> uuids = new HashMap<>();
    for (Row card : cardRows) {
      int index = card.getInteger("gpu_index");
      cards.add(new CardInfo(index, card.getString("model"), card.getLong("memory_total_mb"),
          card.getLong("memory_used_mb"), card.getInteger("utilization_percent"), card.getInteger("temperature_c"),
          card.getInteger("numa_node")));
      long active = card.getLong("active_tasks");
      if (active > 0) {
        tasksPerCard.put(index, (int) active);
      }
      if (card.getString("uuid") != null) {
        uuids.put(index, card.getString("uuid"));
      }
    }
    NodeInfo info = new NodeInfo(row.getString("id"), row.getString("gpu_vendor"), row.getString("status"),
        row.getBoolean("executable"), row.getString("dedicated_tenant"), row.getString("region"),
        row.getString("zone"), row.getString("rack"), TaskRecord.stringMap((JsonObject) row.getValue("labels")),
        row.getString("topology"), row.getInteger("cpu_cores"), row.getDouble("cpu_percent"),
        row.getDouble("memory_total_gb"), row.getLong("memory_used_mb"), row.getInteger("gpu_total"),
        row.getInteger("gpu_used"), cards, tasksPerCard);
    Object ips = row.getValue("internal_ips");
    return new NodeRecord(info, row.getOffsetDateTime("last_heartbeat_at"),
        ips instanceof JsonArray array ? array : new JsonArray(), uuids);
  }
}
