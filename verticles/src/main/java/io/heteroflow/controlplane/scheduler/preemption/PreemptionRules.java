package io.heteroflow.controlplane.scheduler.preemption;

import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.protocol.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Set;

/**
 * Who may preempt and who may be preempted (SPEC §6), with the operator's protections: {@code stage} says which
 * states a victim may be in ({@code running}: running only; {@code scheduled}: scheduled and running;
 * {@code disabled}: none), {@code minRuntime} protects a task that has run less than that, and
 * {@code waitBeforePreempting} makes a preemptor wait in the queue at least that long first.
 */
public record PreemptionRules(String stage, Duration minRuntime, Duration waitBeforePreempting) {
  public static final PreemptionRules DEFAULTS = new PreemptionRules("running", Duration.ZERO, Duration.ZERO);
  /** Only these failures can be cured by freeing resources; a type, model, tenant or NVLink mismatch cannot. */
  public static final Set<ReasonCode> CURABLE = EnumSet.of(ReasonCode.NoSchedulableNodes,
      ReasonCode.InsufficientResources);

  /**
   * The order victims are taken in: priority ascending, then same priority newest first, then among otherwise
   * equal tasks the one with the most recent checkpoint (it loses the least work), then task id.
   */
  public static final Comparator<Occupant> VICTIM_ORDER = Comparator.comparingInt(Occupant::priority)
      .thenComparing(Occupant::createdAt, Comparator.reverseOrder())
      .thenComparing(Occupant::lastCheckpointAt, Comparator.nullsLast(Comparator.reverseOrder()))
      .thenComparing(Occupant::taskId);

  public PreemptionRules {
    if (!Set.of("disabled", "scheduled", "running").contains(stage)) {
      throw new IllegalArgumentException("preempt_stage: one of disabled, scheduled, running");
    }
  }

  public boolean enabled() {
    return !"disabled".equals(stage);
  }

  /**
   * Whether a task that failed with {@code failure} may preempt: not training (it never takes part), only for a
   * failure victims can cure, and only after it has waited {@link #waitBeforePreempting} (a task whose
   * creation time is unknown has waited long enough).
   */
  public boolean mayPreempt(String type, ReasonCode failure, Instant queuedSince, Instant now) {
    return enabled() && !"training".equals(type) && CURABLE.contains(failure)
        && (queuedSince == null || !queuedSince.plus(waitBeforePreempting).isAfter(now));
  }

  /** All four rules of SPEC §6 and the protected runtime: may {@code victim} make room for a task of this priority? */
  public boolean isCandidate(Occupant victim, int preemptorPriority, Instant now) {
    return victim.priority() < preemptorPriority && mayBeVictim(victim, now);
  }

  /**
   * Every rule but priority: not training or inference, preemptible, in a stage that may be preempted, past its
   * protected runtime. Reclaim (SPEC §13) takes borrowed capacity whatever its holder's priority.
   */
  public boolean mayBeVictim(Occupant victim, Instant now) {
    if ("training".equals(victim.type()) || "inference".equals(victim.type()) || !victim.preemptible()
        || !stages().contains(victim.status())) {
      return false;
    }
    if (minRuntime.isZero()) {
      return true;
    }
    return victim.startedAt() != null && !victim.startedAt().plus(minRuntime).isAfter(now);
  }

  private Set<TaskStatus> stages() {
    return switch (stage) {
      case "running" -> EnumSet.of(TaskStatus.RUNNING);
      case "scheduled" -> EnumSet.of(TaskStatus.SCHEDULED, TaskStatus.RUNNING);
      default -> EnumSet.noneOf(TaskStatus.class);
    };
  }
}
