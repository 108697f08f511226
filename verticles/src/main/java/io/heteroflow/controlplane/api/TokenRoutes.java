package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.AuditStore;
import io.heteroflow.controlplane.store.TokenStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Admin only: a tenant's tokens (listed by id and prefix, never the secret), rotation (a new token, shown once; the
 * others stay valid unless {@code revoke_previous}), revocation of one token (the next request with it is a 401),
 * and the audit ledger ({@code GET /audit}).
 */
final class TokenRoutes {
  private static final int AUDIT_PAGE_MAX = 1000;
  private final TokenStore tokens;
  private final AuditStore audit;
  private final AuditTrail trail;

  TokenRoutes(TokenStore tokens, AuditStore audit, AuditTrail trail) {
    this.tokens = tokens;
    this.audit = audit;
    this.trail = trail;
  }

  void mount(Router api) {
    api.get("/tenants/:name/tokens").handler(Http.handle(this::list));
    api.post("/tenants/:name/tokens").handler(Http.handle(this::rotate));
    api.delete("/tenants/:name/tokens/:id").handler(Http.handle(this::revoke));
    api.get("/audit").putMetadata(RouteGuard.QUERY, List.of("limit", "before")).handler(Http.handle(this::page));
  }

  private Future<Reply> list(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    String tenant = ctx.pathParam("name");
    return tokens.list(tenant).map(found -> found.map(list -> {
      JsonArray items = new JsonArray();
      list.forEach(token -> items.add(token.toJson()));
      return Reply.ok(new JsonObject().put("tenant", tenant).put("tokens", items));
    }).orElseThrow(() -> ApiError.notFound("tenant " + StrictJson.printable(tenant))));
  }

  /** {@code POST /tenants/{name}/tokens {"revoke_previous": bool}} ({@code {}}: false): 201 with the new token, shown only here. */
  private Future<Reply> rotate(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    // a JSON object is required (`{}` for the defaults), as on every route with a body: an empty one is refused
    boolean revokePrevious = StrictJson.parse(ctx.body().buffer(), Set.of("revoke_previous"))
        .bool("revoke_previous", false);
    String tenant = ctx.pathParam("name");
    String token = ApiTokens.issue();
    String prefix = ApiTokens.prefix(token);
    return tokens.issue(tenant, ApiTokens.sha256Hex(token), prefix, revokePrevious,
        trail.entry(ctx, "token.rotate", "tenant/" + tenant)).map(issued -> issued.map(done -> new Reply(201,
            done.token().toJson().put("token", token)
                .put("revoked", new JsonArray(done.revoked().stream().map(UUID::toString).toList()))))
        .orElseThrow(() -> ApiError.notFound("tenant " + StrictJson.printable(tenant))));
  }

  private Future<Reply> revoke(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    String tenant = ctx.pathParam("name");
    UUID id = Http.idParam(ctx, "token of tenant " + StrictJson.printable(tenant) + ":");
    return tokens.revoke(tenant, id, trail.entry(ctx, "token.revoke", "tenant/" + tenant))
        .map(revoked -> revoked.map(token -> Reply.ok(token.toJson())).orElseThrow(() -> ApiError.notFound(
            "token " + id + " of tenant " + StrictJson.printable(tenant))));
  }

  /** {@code GET /audit?limit=&before=}: newest first; {@code before} is an entry id from an earlier page. */
  private Future<Reply> page(RoutingContext ctx) {
    Http.requireAdmin(ctx);
    int limit = Http.limit(ctx, 100, AUDIT_PAGE_MAX);
    Long before = null;
    List<String> given = ctx.queryParams().getAll("before");
    if (given.size() > 1) {
      throw ApiError.badField("before", "must be given once");
    }
    if (given.size() == 1) {
      try {
        before = Long.parseLong(given.get(0));
      } catch (NumberFormatException e) {
        throw ApiError.badField("before", "must be an audit entry id (a positive integer)");
      }
      if (before < 1) {
        throw ApiError.badField("before", "must be an audit entry id (a positive integer)");
      }
    }
    return audit.page(limit, before).map(events -> {
      JsonObject reply = new JsonObject().put("events", events).put("count", events.size());
      if (events.size() == limit) {
        reply.put("next_before", events.getJsonObject(events.size() - 1).getLong("id"));
      }
      return Reply.ok(reply);
    });
  }
}
