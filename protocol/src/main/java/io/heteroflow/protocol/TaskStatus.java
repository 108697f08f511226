package io.heteroflow.protocol;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The task state machine of SPEC §7: every state, and every legal transition, declared here and nowhere
 * else. The store turns each transition into a CAS ({@code UPDATE … WHERE status = expected}).
 */
public enum TaskStatus {
  PENDING, SCHEDULED, RUNNING, SUCCEEDED, FAILED, STOPPING, STOPPED, PREEMPTING;

  private static final Map<TaskStatus, Set<TaskStatus>> LEGAL = Map.of(
      PENDING, EnumSet.of(SCHEDULED, STOPPED, FAILED),
      // scheduled → pending: the agent could not start it (rolled back, rescheduled later)
      SCHEDULED, EnumSet.of(RUNNING, PENDING, STOPPING, FAILED, PREEMPTING),
      RUNNING, EnumSet.of(SUCCEEDED, FAILED, STOPPING, PREEMPTING),
      STOPPING, EnumSet.of(STOPPED),
      // a preempting task goes back to the queue once its agent confirms; it can never succeed
      PREEMPTING, EnumSet.of(PENDING, STOPPING),
      SUCCEEDED, EnumSet.noneOf(TaskStatus.class),
      FAILED, EnumSet.noneOf(TaskStatus.class),
      STOPPED, EnumSet.noneOf(TaskStatus.class));

  /** The one authoritative set of states that hold node resources (cards, accounting, quota). */
  public static final Set<TaskStatus> ACTIVE = EnumSet.of(SCHEDULED, RUNNING, STOPPING, PREEMPTING);

  public static final Set<TaskStatus> TERMINAL = EnumSet.of(SUCCEEDED, FAILED, STOPPED);

  public boolean canBecome(TaskStatus next) {
    return LEGAL.get(this).contains(next);
  }

  public boolean isActive() {
    return ACTIVE.contains(this);
  }

  public boolean isTerminal() {
    return TERMINAL.contains(this);
  }

  /** The wire and database spelling: lower case. */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static TaskStatus fromWire(String value) {
    return valueOf(value.toUpperCase(Locale.ROOT));
  }

  /**
   * Where a task in this state goes when its process ended with {@code outcome} (succeeded, failed or
   * stopped, as the agent saw it): a stop or a preemption that was asked for wins over how the process
   * happened to end. Null when the report does not apply (already settled).
   */
  public TaskStatus settleWith(TaskStatus outcome) {
    TaskStatus target = switch (this) {
      case RUNNING, SCHEDULED -> outcome == STOPPED ? FAILED : outcome;
      case STOPPING -> STOPPED;
      case PREEMPTING -> PENDING;
      default -> null;
    };
    return target != null && canBecome(target) ? target : null;
  }
}
