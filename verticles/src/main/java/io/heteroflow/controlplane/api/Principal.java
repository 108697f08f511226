package io.heteroflow.controlplane.api;

/**
 * Who is calling: the admin, or one tenant. Admin submissions belong to the built-in tenant {@code default}.
 * An inactive tenant ({@code active} false) still reads, but may start nothing new ({@link #mayStartWork}).
 */
public record Principal(boolean admin, String tenant, boolean active) {
  public static final String ADMIN_TENANT = "default";

  static Principal ofAdmin() {
    return new Principal(true, ADMIN_TENANT, true);
  }

  static Principal ofTenant(String name, boolean active) {
    return new Principal(false, name, active);
  }

  /** Refuses (403 tenant_inactive) what would start new work for an inactive tenant. */
  void mayStartWork(String what) {
    if (!active) {
      throw new ApiError(403, "tenant_inactive", null, "tenant " + tenant + " is inactive: " + what
          + " is refused (an admin can reactivate it: PUT /api/v1/tenants/" + tenant + " {\"active\": true})");
    }
  }

  /** Whether this caller may see a task of {@code owner}. */
  boolean sees(String owner) {
    return admin || tenant.equals(owner);
  }
}
