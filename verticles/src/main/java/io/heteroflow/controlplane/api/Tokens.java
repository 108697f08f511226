package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TenantStore;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Who a bearer token belongs to: the admin (compared in constant time) or a tenant (by its SHA-256); 401 otherwise. */
final class Tokens {
  private final String adminToken;
  private final TenantStore tenants;

  Tokens(String adminToken, TenantStore tenants) {
    this.adminToken = adminToken;
    this.tenants = tenants;
  }

  /** The principal of an {@code Authorization} value ({@code Bearer <token>}); a 401 ApiError when there is none. */
  Future<Principal> ofAuthorization(String header) {
    if (header == null || !header.startsWith("Bearer ") || header.length() <= 7) {
      return Future.failedFuture(new ApiError(401, "unauthorized", null,
          "missing 'Authorization: Bearer <token>' header"));
    }
    String token = header.substring(7).trim();
    if (MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8), adminToken.getBytes(StandardCharsets.UTF_8))) {
      return Future.succeededFuture(Principal.ofAdmin());
    }
    return tenants.tenantOfToken(TaskRoutes.sha256(token)).map(found -> found
        .map(tenant -> Principal.ofTenant(tenant.name(), tenant.active()))
        .orElseThrow(() -> new ApiError(401, "unauthorized", null, "unknown token")));
  }
}
