package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Tenants (identified by name, authenticated by the SHA-256 of their token) and share groups. */
public final class TenantStore {
  private final Pool pool;

  public TenantStore(Pool pool) {
    this.pool = pool;
  }

  /** Creates a tenant; false when the name is taken (nothing is changed then). */
  public Future<Boolean> create(String name, String tokenSha256) {
    return pool.preparedQuery(Sql.INSERT_TENANT).execute(Tuple.of(name, tokenSha256)).map(rows -> rows.size() == 1);
  }

  /** A tenant as authentication sees it: an inactive one still reads, but nothing new starts for it. */
  public record Tenant(String name, boolean active) {
  }

  public Future<Optional<Tenant>> tenantOfToken(String tokenSha256) {
    return pool.preparedQuery(Sql.TENANT_BY_TOKEN).execute(Tuple.of(tokenSha256))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(tenant(rows.iterator().next())));
  }

  /**
   * Activates or deactivates a tenant; empty when there is none of that name. Deactivating marks its pending
   * tasks {@code TenantInactive} in the same transaction (the scheduler no longer takes them).
   */
  public Future<Optional<Tenant>> setActive(String name, boolean active) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.SET_TENANT_ACTIVE).execute(Tuple.of(name, active))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(Optional.<Tenant>empty());
          }
          Tenant tenant = tenant(rows.iterator().next());
          Future<?> marked = active ? Future.succeededFuture()
              : conn.preparedQuery(Sql.MARK_PENDING_OF_INACTIVE).execute(Tuple.of(name));
          return marked.map(Optional.of(tenant));
        }));
  }

  private static Tenant tenant(io.vertx.sqlclient.Row row) {
    return new Tenant(row.getString("name"), row.getBoolean("active"));
  }

  /** The outcome of creating a share group. */
  public record GroupCreated(boolean created, List<String> unknownTenants) {
  }

  /** Creates a share group with its members in one transaction; nothing is written if a member is unknown. */
  public Future<GroupCreated> createShareGroup(String name, List<String> tenants) {
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
                .map(new GroupCreated(true, List.of()));
          });
        }));
  }
}
