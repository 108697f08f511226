package io.heteroflow.controlplane.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.heteroflow.protocol.TaskStatus;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The state machine as a table: exactly these transitions are legal, every other pair is refused. */
class TaskStatusTest {
  static final Map<TaskStatus, Set<TaskStatus>> EXPECTED_LEGAL = Map.of(
      TaskStatus.PENDING, EnumSet.of(TaskStatus.SCHEDULED, TaskStatus.STOPPED, TaskStatus.FAILED),
      TaskStatus.SCHEDULED, EnumSet.of(TaskStatus.RUNNING, TaskStatus.PENDING, TaskStatus.STOPPING, TaskStatus.FAILED,
          TaskStatus.PREEMPTING),
      TaskStatus.RUNNING, EnumSet.of(TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.STOPPING, TaskStatus.PREEMPTING),
      TaskStatus.STOPPING, EnumSet.of(TaskStatus.STOPPED),
      TaskStatus.PREEMPTING, EnumSet.of(TaskStatus.PENDING, TaskStatus.STOPPING),
      TaskStatus.SUCCEEDED, EnumSet.noneOf(TaskStatus.class),
      TaskStatus.FAILED, EnumSet.noneOf(TaskStatus.class),
      TaskStatus.STOPPED, EnumSet.noneOf(TaskStatus.class));

  @Test
  void everyPairIsLegalExactlyWhenDeclared() {
    int illegal = 0;
    for (TaskStatus from : TaskStatus.values()) {
      for (TaskStatus to : TaskStatus.values()) {
        boolean expected = EXPECTED_LEGAL.get(from).contains(to);
        assertEquals(expected, from.canBecome(to), from + " → " + to);
        illegal += expected ? 0 : 1;
      }
    }
    assertEquals(64 - 15, illegal);
  }

  @Test
  void preemptingCanNeverSucceedEvenWhenTheProcessExitedZero() {
    assertFalse(TaskStatus.PREEMPTING.canBecome(TaskStatus.SUCCEEDED));
    assertEquals(TaskStatus.PENDING, TaskStatus.PREEMPTING.settleWith(TaskStatus.SUCCEEDED));
  }

  @Test
  void settlingFollowsWhatWasAskedFor() {
    assertEquals(TaskStatus.SUCCEEDED, TaskStatus.RUNNING.settleWith(TaskStatus.SUCCEEDED));
    assertEquals(TaskStatus.FAILED, TaskStatus.RUNNING.settleWith(TaskStatus.FAILED));
    assertEquals(TaskStatus.FAILED, TaskStatus.RUNNING.settleWith(TaskStatus.STOPPED), "nobody asked it to stop");
    assertEquals(TaskStatus.STOPPED, TaskStatus.STOPPING.settleWith(TaskStatus.SUCCEEDED));
    for (TaskStatus terminal : TaskStatus.TERMINAL) {
      assertNull(terminal.settleWith(TaskStatus.SUCCEEDED), "a settled task is never settled again");
    }
  }

  @Test
  void transitionalStatesHoldResources() {
    assertEquals(EnumSet.of(TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStatus.STOPPING, TaskStatus.PREEMPTING),
        TaskStatus.ACTIVE);
  }
}
