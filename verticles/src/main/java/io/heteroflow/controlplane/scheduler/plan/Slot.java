package io.heteroflow.controlplane.scheduler.plan;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * A planned start (SPEC §13): the tasks it is for (a task, or a group's members), from when until when, and what
 * it takes on which node. {@code end} is {@link Instant#MAX} when the tasks' runtime is unknown.
 */
public record Slot(Set<UUID> owners, Instant start, Instant end, Map<String, Take> takes) {
  public Slot {
    owners = Set.copyOf(owners);
    takes = Map.copyOf(takes);
  }

  /** What the slot takes on one node. */
  public record Take(List<Integer> cards, double cpuCores, long memoryMb) {
    public Take {
      cards = List.copyOf(cards);
    }
  }
}
