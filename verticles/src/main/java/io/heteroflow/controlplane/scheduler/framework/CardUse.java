package io.heteroflow.controlplane.scheduler.framework;

import java.util.Set;

/** What active allocations hold on one card: whole-card tasks, shards (with their memory) and their tenants. */
public record CardUse(int wholeTasks, int shards, long shardMemoryMb, Set<String> tenants) {
  public static final CardUse NONE = new CardUse(0, 0, 0, Set.of());

  public CardUse {
    tenants = Set.copyOf(tenants);
  }

  public boolean isEmpty() {
    return wholeTasks == 0 && shards == 0;
  }

  CardUse plusWhole(String tenant) {
    return new CardUse(wholeTasks + 1, shards, shardMemoryMb, with(tenant));
  }

  CardUse plusShard(String tenant, long memoryMb) {
    return new CardUse(wholeTasks, shards + 1, shardMemoryMb + memoryMb, with(tenant));
  }

  private Set<String> with(String tenant) {
    java.util.HashSet<String> all = new java.util.HashSet<>(tenants);
    all.add(tenant);
    return all;
  }
}
