package io.heteroflow.controlplane.api;

/** Who is calling: the admin, or one tenant. Admin submissions belong to the built-in tenant {@code default}. */
public record Principal(boolean admin, String tenant) {
  public static final String ADMIN_TENANT = "default";

  static Principal ofAdmin() {
    return new Principal(true, ADMIN_TENANT);
  }

  static Principal ofTenant(String name) {
    return new Principal(false, name);
  }

  /** Whether this caller may see a task of {@code owner}. */
  boolean sees(String owner) {
    return admin || tenant.equals(owner);
  }
}
