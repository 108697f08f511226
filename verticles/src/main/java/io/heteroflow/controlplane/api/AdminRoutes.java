package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TenantStore;
import io.heteroflow.controlplane.api.Http.Reply;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Tenants and share groups. */
final class AdminRoutes {
  private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private final TenantStore tenants;
  private final AuditTrail trail;

  AdminRoutes(TenantStore tenants, AuditTrail trail) {
    this.tenants = tenants;
    this.trail = trail;
  }

  void mount(Router api) {
    api.post("/tenants").handler(Http.handle(this::createTenant));
    api.put("/tenants/:name").handler(Http.handle(this::updateTenant));
    api.post("/share-groups").handler(Http.handle(this::createShareGroup));
  }

  /** {@code PUT /tenants/{name} {active}}: deactivate (its tokens still read; nothing new starts) or reactivate. */
  private Future<Reply> updateTenant(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("active"));
    if (!(json.presentFields().get("active") instanceof Boolean active)) {
      throw ApiError.badField("active", "is required: true or false");
    }
    String name = ctx.pathParam("name");
    return tenants.setActive(name, active, trail.entry(ctx, "tenant.update", "tenant/" + name)).map(updated -> updated
        .map(tenant -> Reply.ok(new JsonObject().put("name", tenant.name()).put("active", tenant.active())))
        .orElseThrow(() -> ApiError.notFound("tenant " + StrictJson.printable(name))));
  }

  private Future<Reply> createTenant(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("name"));
    String name = json.requiredString("name", 63, TENANT);
    String token = ApiTokens.issue();
    return tenants.create(name, ApiTokens.sha256Hex(token), ApiTokens.prefix(token),
        trail.entry(ctx, "tenant.create", "tenant/" + name)).map(created -> {
      if (!created) {
        throw new ApiError(409, "conflict", "name", "tenant '" + name + "' already exists");
      }
      return new Reply(201, new JsonObject().put("name", name).put("token", token));
    });
  }

  private Future<Reply> createShareGroup(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("name", "tenants"));
    String name = json.requiredString("name", 63, TENANT);
    List<String> tenants = json.stringList("tenants", 1000, 63, true);
    if (!json.has("tenants")) {
      throw ApiError.badField("tenants", "is required");
    }
    return this.tenants.createShareGroup(name, tenants, trail.entry(ctx, "share_group.create", "share_group/" + name))
        .map(result -> {
      if (!result.unknownTenants().isEmpty()) {
        throw ApiError.badField("tenants", "unknown tenants " + result.unknownTenants());
      }
      if (!result.created()) {
        throw new ApiError(409, "conflict", "name", "share group '" + name + "' already exists");
      }
      return new Reply(201, new JsonObject().put("name", name).put("tenants", new JsonArray(List.copyOf(tenants))));
    });
  }
}
