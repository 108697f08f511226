package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * The audit ledger of admin actions (V17 {@code audit_events}): who (the admin, or a tenant's name — never a
 * token), what (action, target, a small JSON detail), when (the caller's clock) and the request id if the request
 * carried one. Stores whose actions are one transaction write their entry in it ({@link #record(SqlClient, Entry)});
 * the others record right after the action succeeded ({@link #record(Entry)}).
 */
public final class AuditStore {
  private final Pool pool;

  public AuditStore(Pool pool) {
    this.pool = pool;
  }

  /** One audit entry; {@code requestId} may be null. */
  public record Entry(Instant at, String actor, String action, String target, JsonObject detail, String requestId) {
    public Entry {
      detail = detail == null ? new JsonObject() : detail;
    }

    /** This entry with more detail. */
    public Entry with(String key, Object value) {
      return new Entry(at, actor, action, target, detail.copy().put(key, value), requestId);
    }

    public Entry about(String action, String target) {
      return new Entry(at, actor, action, target, detail, requestId);
    }
  }

  /** Writes {@code entry} on {@code client}: a transaction's connection writes it in that transaction. */
  public static Future<Void> record(SqlClient client, Entry entry) {
    return client.preparedQuery(Sql.INSERT_AUDIT).execute(Tuple.of(entry.at().atOffset(ZoneOffset.UTC), entry.actor(),
        entry.action(), entry.target(), entry.detail(), entry.requestId())).mapEmpty();
  }

  public Future<Void> record(Entry entry) {
    return record(pool, entry);
  }

  /** The newest {@code limit} entries, below the entry id {@code before} when given (paging backwards). */
  public Future<JsonArray> page(int limit, Long before) {
    return pool.preparedQuery(Sql.AUDIT_PAGE).execute(Tuple.of(limit, before)).map(rows -> {
      JsonArray events = new JsonArray();
      rows.forEach(row -> events.add(json(row)));
      return events;
    });
  }

  private static JsonObject json(Row row) {
    OffsetDateTime at = row.getOffsetDateTime("at");
    Object detail = row.getValue("detail");
    return new JsonObject().put("id", row.getLong("id")).put("at", at.toInstant().toString())
        .put("actor", row.getString("actor")).put("action", row.getString("action"))
        .put("target", row.getString("target"))
        .put("detail", detail instanceof JsonObject object ? object : new JsonObject())
        .put("request_id", row.getString("request_id"));
  }
}
