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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Tenant tokens (V17 {@code tenant_tokens}): a tenant may hold several; each is stored as the SHA-256 of the token
 * with a short non-secret prefix for display, and can be revoked (authentication skips revoked ones at once).
 * Every change is written with its audit entry in one transaction.
 */
public final class TokenStore {
  private final Pool pool;

  public TokenStore(Pool pool) {
    this.pool = pool;
  }

  /** A token as an admin sees it: never the token, never its digest. */
  public record TokenInfo(UUID id, String tenant, String prefix, Instant createdAt, String createdBy,
                          Instant revokedAt, String revokedBy) {
    public JsonObject toJson() {
      return new JsonObject().put("id", id.toString()).put("tenant", tenant).put("prefix", prefix)
          .put("created_at", createdAt.toString()).put("created_by", createdBy)
          .put("revoked_at", revokedAt == null ? null : revokedAt.toString()).put("revoked_by", revokedBy)
          .put("active", revokedAt == null);
    }
  }

  /** A new token of a tenant, and the ids of the tokens its issue revoked. */
  public record Issued(TokenInfo token, List<UUID> revoked) {
  }

  /** The tokens of {@code tenant}, oldest first; empty when there is no such tenant. */
  public Future<Optional<List<TokenInfo>>> list(String tenant) {
    return pool.preparedQuery(Sql.TENANT_EXISTS).execute(Tuple.of(tenant)).compose(exists -> exists.size() == 0
        ? Future.succeededFuture(Optional.empty())
        : pool.preparedQuery(Sql.TOKENS_OF_TENANT).execute(Tuple.of(tenant)).map(rows -> {
          List<TokenInfo> tokens = new ArrayList<>();
          rows.forEach(row -> tokens.add(info(row)));
          return Optional.of(tokens);
        }));
  }

  /**
   * Issues a token (its digest and prefix) to {@code tenant}, revoking its other live tokens when
   * {@code revokePrevious}; empty (nothing written) when there is no such tenant.
   */
  public Future<Optional<Issued>> issue(String tenant, String tokenSha256, String prefix, boolean revokePrevious,
                                        AuditStore.Entry audit) {
    return pool.withTransaction(conn -> insert(conn, tenant, tokenSha256, prefix, audit).compose(inserted -> {
      if (inserted.isEmpty()) {
        return Future.succeededFuture(Optional.<Issued>empty());
      }
      TokenInfo token = inserted.get();
      Future<List<UUID>> revoked = revokePrevious
          ? conn.preparedQuery(Sql.REVOKE_OTHER_TOKENS).execute(Tuple.of(tenant, token.id(), utc(audit.at()),
              audit.actor())).map(rows -> {
                List<UUID> ids = new ArrayList<>();
                rows.forEach(row -> ids.add(row.getUUID("id")));
                return ids;
              })
          : Future.succeededFuture(List.of());
      return revoked.compose(ids -> AuditStore.record(conn, audit.with("token_id", token.id().toString())
              .with("prefix", prefix).with("revoked", new JsonArray(ids.stream().map(UUID::toString).toList())))
          .map(Optional.of(new Issued(token, ids))));
    }));
  }

  /** Inserts a token of an existing tenant on {@code client} (no audit entry: the caller writes one). */
  static Future<Optional<TokenInfo>> insert(SqlClient client, String tenant, String tokenSha256, String prefix,
                                            AuditStore.Entry audit) {
    return client.preparedQuery(Sql.INSERT_TOKEN).execute(Tuple.of(UUID.randomUUID(), tenant, tokenSha256, prefix,
        utc(audit.at()), audit.actor())).map(rows -> rows.size() == 0 ? Optional.<TokenInfo>empty()
        : Optional.of(info(rows.iterator().next())));
  }

  /**
   * Revokes token {@code id} of {@code tenant} from now on (a revoked one stays as it was: idempotent); empty when
   * the tenant has no such token. The audit entry is written only when the token was live.
   */
  public Future<Optional<TokenInfo>> revoke(String tenant, UUID id, AuditStore.Entry audit) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.REVOKE_TOKEN)
        .execute(Tuple.of(tenant, id, utc(audit.at()), audit.actor())).compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(Optional.<TokenInfo>empty());
          }
          Row row = rows.iterator().next();
          TokenInfo token = info(row);
          Future<Void> audited = row.getBoolean("changed")
              ? AuditStore.record(conn, audit.with("token_id", id.toString()).with("prefix", token.prefix()))
              : Future.succeededFuture();
          return audited.map(Optional.of(token));
        }));
  }

  private static TokenInfo info(Row row) {
    OffsetDateTime revoked = row.getOffsetDateTime("revoked_at");
    return new TokenInfo(row.getUUID("id"), row.getString("tenant"), row.getString("prefix"),
        row.getOffsetDateTime("created_at").toInstant(), row.getString("created_by"),
        revoked == null ? null : revoked.toInstant(), row.getString("revoked_by"));
  }

  static OffsetDateTime utc(Instant at) {
    return at.atOffset(ZoneOffset.UTC);
  }
}
