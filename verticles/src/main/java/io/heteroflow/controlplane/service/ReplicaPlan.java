package io.heteroflow.controlplane.service;

import io.heteroflow.controlplane.store.ReplicaSlot;
import io.heteroflow.protocol.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one rebuild beat does to one service (SPEC §2 inference rebuild), decided from its slots alone:
 * <ul>
 *   <li>a slot below the desired count without a live replica gets one ({@code START}): at once when the slot was
 *       never used or its last replica did not fail; after a back-off when replicas keep failing quickly (the
 *       first failure is retried at once, then 10 s, doubling to 5 min; a replica that ran 10 minutes resets it);
 *   <li>a live replica at or above the desired count is stopped, the newest slots first ({@code STOP});
 *   <li>a placed replica whose node is offline is lost ({@code LOST}): it is settled, and the next beat rebuilds it.
 * </ul>
 * A rebuild (counted) replaces a replica that failed, was lost or exited; a stopped one (by scaling, its window,
 * or a user's stop of that task) is replaced when its slot is wanted, but that is no rebuild.
 * Nothing new starts for an inactive tenant. Which replica a slot had is part of each action: the store advances
 * a slot only from the generation read, so acting on a stale plan does nothing.
 */
public final class ReplicaPlan {
  private ReplicaPlan() {}

  public static final Duration FIRST_BACKOFF = Duration.ofSeconds(10);
  public static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
  /** A replica that ran this long before it failed does not count towards the back-off. */
  public static final Duration STABLE_RUN = Duration.ofMinutes(10);
  /** The stop reason of a replica removed by scaling (in its ledger; the agent's confirmation says only "stopped"). */
  public static final String SCALED_DOWN = "ScaledDown";

  public enum Kind { START, STOP, LOST, WAIT }

  /**
   * One action on a slot: {@code generation} and {@code failures} are what a START writes, {@code rebuild} whether
   * it re-creates a replica that failed, was lost or went missing; {@code due} when a WAIT ends.
   */
  public record Action(Kind kind, int slot, ReplicaSlot current, int generation, int failures, boolean rebuild,
                       Instant due) {
  }

  public static List<Action> plan(int desired, List<ReplicaSlot> slots, boolean tenantActive, Instant now) {
    List<Action> actions = new ArrayList<>();
    Set<Integer> known = new HashSet<>();
    for (ReplicaSlot slot : slots) {
      known.add(slot.slot());
      if (slot.live()) {
        if (slot.slot() >= desired && slot.status() != TaskStatus.STOPPING) {
          actions.add(new Action(Kind.STOP, slot.slot(), slot, slot.generation(), slot.failures(), false, null));
        } else if ("offline".equals(slot.nodeStatus())
            && (slot.status() == TaskStatus.RUNNING || slot.status() == TaskStatus.SCHEDULED)) {
          actions.add(new Action(Kind.LOST, slot.slot(), slot, slot.generation(), slot.failures(), false, null));
        }
      } else if (slot.slot() < desired && tenantActive) {
        actions.add(next(slot, now));
      }
    }
    for (int slot = 0; slot < desired && tenantActive; slot++) {
      if (!known.contains(slot)) {
        actions.add(new Action(Kind.START, slot, null, 0, 0, false, null));
      }
    }
    return actions;
  }

  /** The next replica of a slot whose last one ended (or was never inserted): now, or after its back-off. */
  private static Action next(ReplicaSlot slot, Instant now) {
    boolean rebuild = slot.status() == TaskStatus.FAILED || slot.status() == TaskStatus.SUCCEEDED;
    Instant due = retryAt(slot);
    Kind kind = due != null && now.isBefore(due) ? Kind.WAIT : Kind.START;
    return new Action(kind, slot.slot(), slot, slot.generation() + 1, failuresWith(slot), rebuild,
        due == null ? now : due);
  }

  /** When the next replica of a slot whose last one ended may start: its end plus the back-off (null: not known). */
  public static Instant retryAt(ReplicaSlot slot) {
    return slot.finishedAt() == null ? null : slot.finishedAt().toInstant().plus(backoff(failuresWith(slot)));
  }

  /** Quick failures in a row including the slot's last replica (0 when it did not fail). */
  public static int failuresWith(ReplicaSlot slot) {
    if (slot.status() != TaskStatus.FAILED) {
      return 0;
    }
    boolean quick = slot.startedAt() == null || slot.finishedAt() == null
        || Duration.between(slot.startedAt(), slot.finishedAt()).compareTo(STABLE_RUN) < 0;
    return quick ? slot.failures() + 1 : 1;
  }

  /** How long a slot waits after {@code failures} quick failures in a row: 0, 0, 10 s, 20 s, … at most 5 min. */
  public static Duration backoff(int failures) {
    if (failures <= 1) {
      return Duration.ZERO;
    }
    int doublings = Math.min(failures - 2, 10);
    Duration wait = FIRST_BACKOFF.multipliedBy(1L << doublings);
    return wait.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : wait;
  }
}
