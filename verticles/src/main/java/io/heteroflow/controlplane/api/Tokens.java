package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TenantStore;
import io.vertx.core.Future;

/**
 * The one authentication path of REST and the SockJS bridge: the admin token by its digest in constant time, a
 * tenant token by its SHA-256 among the live ones (indexed); a 401 otherwise. Tokens are never logged nor kept.
 */
final class Tokens {
  private final byte[] adminDigest;
  private final TenantStore tenants;

  Tokens(String adminToken, TenantStore tenants) {
    this.adminDigest = ApiTokens.digest(adminToken);
    this.tenants = tenants;
  }

  /** Who a request is, and the hex SHA-256 of its token (the key of its rate limit). */
  record Authenticated(Principal principal, String tokenSha256) {}

  /** The principal of an {@code Authorization} value ({@code Bearer <token>}); a 401 ApiError when there is none. */
  Future<Principal> ofAuthorization(String header) {
    return authenticate(header).map(Authenticated::principal);
  }

  Future<Authenticated> authenticate(String header) {
    if (header == null || !header.startsWith("Bearer ") || header.length() <= 7) {
      return Future.failedFuture(new ApiError(401, "unauthorized", null,
          "missing 'Authorization: Bearer <token>' header"));
    }
    byte[] digest = ApiTokens.digest(header.substring(7).trim());
    String key = ApiTokens.hex(digest);
    if (ApiTokens.sameToken(digest, adminDigest)) {
      return Future.succeededFuture(new Authenticated(Principal.ofAdmin(), key));
    }
    return tenants.tenantOfToken(key).map(found -> found
        .map(tenant -> new Authenticated(Principal.ofTenant(tenant.name(), tenant.active()), key))
        .orElseThrow(() -> new ApiError(401, "unauthorized", null, "unknown or revoked token")));
  }
}
