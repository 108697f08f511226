package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/** The task_events ledger read forwards by id (the primary key): what the event relay publishes to bus clients. */
public final class TaskEventFeed {
  static final String LATEST_EVENT_ID = "SELECT coalesce(max(id), 0) AS id FROM task_events";
  static final String EVENTS_AFTER = "SELECT e.id, e.task_id, t.tenant, t.name, e.at, e.kind, e.from_status,"
      + " e.to_status, e.code, e.message FROM task_events e JOIN tasks t ON t.id = e.task_id"
      + " WHERE e.id > $1 ORDER BY e.id LIMIT $2";
  private final Pool pool;

  public TaskEventFeed(Pool pool) {
    this.pool = pool;
  }

  /** One ledger row: its id, the owning tenant, and the event as clients see it. */
  public record Event(long id, String tenant, boolean statusChange, JsonObject json) {}

  public Future<Long> latestId() {
    return pool.preparedQuery(LATEST_EVENT_ID).execute().map(rows -> rows.iterator().next().getLong("id"));
  }

  /** Up to {@code limit} rows with an id above {@code afterId}, in id order (committed ones only, as always). */
  public Future<List<Event>> after(long afterId, int limit) {
    return pool.preparedQuery(EVENTS_AFTER).execute(Tuple.of(afterId, limit)).map(rows -> {
      List<Event> events = new ArrayList<>();
      for (Row row : rows) {
        events.add(new Event(row.getLong("id"), row.getString("tenant"), row.getString("to_status") != null,
            new JsonObject().put("id", row.getLong("id")).put("task_id", row.getUUID("task_id").toString())
                .put("tenant", row.getString("tenant")).put("name", row.getString("name"))
                .put("at", row.getOffsetDateTime("at").toString()).put("kind", row.getString("kind"))
                .put("from", row.getString("from_status")).put("to", row.getString("to_status"))
                .put("code", row.getString("code")).put("message", row.getString("message"))));
      }
      return events;
    });
  }
}
