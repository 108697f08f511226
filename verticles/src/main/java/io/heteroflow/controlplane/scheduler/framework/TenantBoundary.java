package io.heteroflow.controlplane.scheduler.framework;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The cross-tenant sharing boundary (SPEC §5): two tenants may use one physical resource at once only if
 * they are the same tenant or members of one share group. No group means full isolation; a tenant this
 * boundary does not know shares with nobody (fail closed). The relation is checked against every tenant
 * already on a card, so it is never applied transitively.
 */
public final class TenantBoundary {
  public static final TenantBoundary ISOLATED = new TenantBoundary(Map.of());
  private final Map<String, Set<String>> groupsOfTenant;

  public TenantBoundary(Map<String, Set<String>> groupsOfTenant) {
    Map<String, Set<String>> copy = new HashMap<>();
    groupsOfTenant.forEach((tenant, groups) -> copy.put(tenant, Set.copyOf(groups)));
    this.groupsOfTenant = Map.copyOf(copy);
  }

  /** From (group, tenant) membership rows. */
  public static TenantBoundary ofMemberships(Collection<Map.Entry<String, String>> groupTenantPairs) {
    Map<String, Set<String>> groups = new HashMap<>();
    for (Map.Entry<String, String> membership : groupTenantPairs) {
      groups.computeIfAbsent(membership.getValue(), k -> new HashSet<>()).add(membership.getKey());
    }
    return new TenantBoundary(groups);
  }

  public boolean mayShare(String newcomer, String present) {
    if (newcomer.equals(present)) {
      return true;
    }
    Set<String> mine = groupsOfTenant.get(newcomer);
    Set<String> theirs = groupsOfTenant.get(present);
    if (mine == null || theirs == null) {
      return false;
    }
    for (String group : mine) {
      if (theirs.contains(group)) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code newcomer} may join a card already used by all of {@code present}. */
  public boolean mayJoin(String newcomer, Set<String> present) {
    for (String tenant : present) {
      if (!mayShare(newcomer, tenant)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof TenantBoundary boundary && boundary.groupsOfTenant.equals(groupsOfTenant);
  }

  @Override
  public int hashCode() {
    return groupsOfTenant.hashCode();
  }
}
