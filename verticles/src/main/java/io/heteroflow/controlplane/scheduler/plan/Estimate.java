package io.heteroflow.controlplane.scheduler.plan;

import java.time.Instant;
import java.util.UUID;

/**
 * When a pending task or group (by id) is expected to start, from the round's reservation plan (SPEC §13); {@code at}
 * null with a {@code note} saying why when it cannot be known. Kept to the second, so a plan that has not moved
 * writes nothing.
 */
public record Estimate(UUID id, Instant at, String note) {
  public Estimate {
    at = at == null ? null : at.truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
  }
}
