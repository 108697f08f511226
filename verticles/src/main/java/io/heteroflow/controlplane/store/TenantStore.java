package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Tenants (identified by name, authenticated by the SHA-256 of a live token: {@link TokenStore}) and share groups. */
public final class TenantStore {
  private final Pool pool;

  public TenantStore(Pool pool) {
    this.pool = pool;
  }

  /**
   * Creates a tenant with its first token (the token's digest and display prefix) and the audit entry, in one
   * transaction; false when the name is taken (nothing is changed then).
   */
  public Future<Boolean> create(String name, String tokenSha256, String prefix, AuditStore.Entry audit) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.INSERT_TENANT).execute(Tuple.of(name))
        .compose(rows -> rows.size() == 0 ? Future.succeededFuture(false)
            : TokenStore.insert(conn, name, tokenSha256, prefix, audit).compose(token -> AuditStore.record(conn,
                audit.with("token_id", token.orElseThrow().id().toString()).with("prefix", prefix)))
            .map(true)));
  }

  /** A tenant as authentication sees it: an inactive one still reads, but nothing new starts for it. */
  public record Tenant(String name, boolean active) {
  }

  /** The tenant of a live (not revoked) token, by the token's SHA-256: the one authentication path for tenants. */
  public Future<Optional<Tenant>> tenantOfToken(String tokenSha256) {
    return pool.preparedQuery(Sql.TENANT_BY_TOKEN).execute(Tuple.of(tokenSha256))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(tenant(rows.iterator().next())));
  }

  /**
   * Activates or deactivates a tenant; empty when there is none of that name. Deactivating marks its pending
   * tasks {@code TenantInactive} in the same transaction (the scheduler no longer takes them).
   */
  public Future<Optional<Tenant>> setActive(String name, boolean active, AuditStore.Entry audit) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.SET_TENANT_ACTIVE).execute(Tuple.of(name, active))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(Optional.<Tenant>empty());
          }
          Tenant tenant = tenant(rows.iterator().next());
          Future<?> marked = active ? Future.succeededFuture()
              : conn.preparedQuery(Sql.MARK_PENDING_OF_INACTIVE).execute(Tuple.of(name));
          return marked.compose(done -> AuditStore.record(conn, audit.with("active", active)))
              .map(Optional.of(tenant));
        }));
  }

  private static Tenant tenant(io.vertx.sqlclient.Row row) {
    return new Tenant(row.getString("name"), row.getBoolean("active"));
  }

  /** The outcome of creating a share group. */
  public record GroupCreated(boolean created, List<String> unknownTenants) {
  }

  /** Creates a share group with its members in one transaction; nothing is written if a member is unknown. */
  public Future<GroupCreated> createShareGroup(String name, List<String> tenants, AuditStore.Entry audit) {
    String[] members = tenants.toArray(new String[0]);
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.EXISTING_TENANTS).execute(Tuple.of((Object) members))
        .compose(existing -> {
          Set<String> known = new HashSet<>();
          existing.forEach(row -> known.add(row.getString("name")));
          List<String> unknown = new ArrayList<>();
          for (String tenant : tenants) {
            if (!known.contains(tenant)) {
              unknown.add(tenant);
            }
          }
          if (!unknown.isEmpty()) {
            return Future.succeededFuture(new GroupCreated(false, unknown));
          }
          return conn.preparedQuery(Sql.INSERT_SHARE_GROUP).execute(Tuple.of(name)).compose(inserted -> {
            if (inserted.size() == 0) {
              return Future.succeededFuture(new GroupCreated(false, List.of()));
            }
            List<Tuple> batch = tenants.stream().distinct().map(tenant -> Tuple.of(name, tenant)).toList();
            return conn.preparedQuery(Sql.INSERT_SHARE_GROUP_MEMBER).executeBatch(batch)
                .compose(written -> AuditStore.record(conn, audit.with("tenants", new io.vertx.core.json.JsonArray(List.copyOf(tenants)))))
                .map(new GroupCreated(true, List.of()));
          });
        }));
  }
}
