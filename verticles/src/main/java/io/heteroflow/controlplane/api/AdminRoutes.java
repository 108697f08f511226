package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TenantStore;
import io.heteroflow.controlplane.api.Http.Reply;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Tenants and share groups. */
final class AdminRoutes {
  private static final Pattern TENANT = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");
  private static final SecureRandom RANDOM = new SecureRandom();
  private final TenantStore tenants;

  AdminRoutes(TenantStore tenants) {
    this.tenants = tenants;
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
    return tenants.setActive(name, active).map(updated -> updated
        .map(tenant -> Reply.ok(new JsonObject().put("name", tenant.name()).put("active", tenant.active())))
        .orElseThrow(() -> ApiError.notFound("tenant " + StrictJson.printable(name))));
  }

  private Future<Reply> createTenant(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    StrictJson json = StrictJson.parse(ctx.body().buffer(), Set.of("name"));
    String name = json.requiredString("name", 63, TENANT);
    String token = "hft_" + Base64.getUrlEncoder().withoutPadding().encodeToString(randomBytes());
    return tenants.create(name, TaskRoutes.sha256(token)).map(created -> {
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
    return this.tenants.createShareGroup(name, tenants).map(result -> {
      if (!result.unknownTenants().isEmpty()) {
        throw ApiError.badField("tenants", "unknown tenants " + result.unknownTenants());
      }
      if (!result.created()) {
        throw new ApiError(409, "conflict", "name", "share group '" + name + "' already exists");
      }
      return new Reply(201, new JsonObject().put("name", name).put("tenants", new JsonArray(List.copyOf(tenants))));
    });
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[24];
    RANDOM.nextBytes(bytes);
    return bytes;
  }
}
