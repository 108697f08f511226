package io.heteroflow.controlplane.service;

import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.ReplicaSlot;
import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * How a service is doing, as its view and metrics show it: {@code Stopped} (for good), {@code Paused} (0 replicas
 * wanted), {@code Degraded} (fewer running than wanted, and some slot is failing, lost, unplaceable or its tenant
 * inactive: the reason says which), else {@code Running} (every wanted replica running, or the rest starting).
 */
public record ServiceHealth(String status, int desired, int running, int pending, String reasonCode,
                            String reasonMessage) {
  public static final String RUNNING = "Running";
  public static final String DEGRADED = "Degraded";
  public static final String PAUSED = "Paused";
  public static final String STOPPED = "Stopped";
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

  public static ServiceHealth of(GroupRecord service, List<ReplicaSlot> slots, boolean tenantActive, Instant now) {
    int desired = service.desiredReplicas() == null ? 0 : service.desiredReplicas();
    int running = 0;
    int pending = 0;
    List<String> problems = new ArrayList<>();
    for (ReplicaSlot slot : slots) {
      if (slot.slot() >= desired) {
        continue;
      }
      if (slot.status() == TaskStatus.RUNNING) {
        running++;
      } else if (slot.live()) {
        pending++;
        if (slot.status() == TaskStatus.PENDING && slot.reasonCode() != null) {
          problems.add("replica " + slot.slot() + " cannot be placed: " + slot.reasonMessage());
        } else if ("offline".equals(slot.nodeStatus())) {
          problems.add("replica " + slot.slot() + " lost with node " + slot.nodeId());
        }
      } else if (slot.status() == TaskStatus.FAILED) {
        int failures = ReplicaPlan.failuresWith(slot);
        Instant due = ReplicaPlan.retryAt(slot);
        String how = "NodeLost".equals(slot.reasonCode()) ? "lost with node " + slot.nodeId()
            : "failed" + (failures > 1 ? " " + failures + " times in a row" : "") + (slot.exitCode() == null ? ""
                : " (exit code " + slot.exitCode() + ")");
        problems.add("replica " + slot.slot() + " " + how
            + (due != null && due.isAfter(now) ? ", next try at " + CLOCK.format(due) : ", being rebuilt"));
      }
    }
    if (!tenantActive && running < desired) {
      problems.add(0, "tenant " + service.tenant() + " is inactive: no replica is started for it");
    }
    if (GroupRecord.STOPPED.equals(service.status())) {
      return new ServiceHealth(STOPPED, desired, running, pending, service.reasonCode(), service.reasonMessage());
    }
    if (desired == 0) {
      return new ServiceHealth(PAUSED, 0, running, pending, null, service.windowOwns()
          ? "paused by its schedule window" : "scaled to 0 replicas");
    }
    if (running < desired && !problems.isEmpty()) {
      return new ServiceHealth(DEGRADED, desired, running, pending, "Degraded", running + "/" + desired
          + " replicas running: " + String.join("; ", problems.subList(0, Math.min(3, problems.size())))
          + (problems.size() > 3 ? "; and " + (problems.size() - 3) + " more" : ""));
    }
    return new ServiceHealth(RUNNING, desired, running, pending, null, running < desired
        ? running + "/" + desired + " replicas running, the others starting" : null);
  }
}
