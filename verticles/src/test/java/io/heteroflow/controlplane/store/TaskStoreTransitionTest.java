package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import io.vertx.pgclient.PgException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every transition on real PostgreSQL: illegal ones refused with nothing written, legal ones as CAS. */
class TaskStoreTransitionTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);

  @BeforeAll
  static void start() throws Exception {
    store.node("n1", 64);
  }

  /** A task driven to {@code status} through legal transitions only. */
  private static TaskRecord taskIn(TaskStatus status) throws Exception {
    TaskRecord task = store.task(1);
    UUID id = task.id();
    if (status == TaskStatus.PENDING) {
      return task;
    }
    if (status == TaskStatus.STOPPED) {
      assertTrue(await(store.tasks.transition(id, TaskStatus.PENDING, TaskStatus.STOPPED, TaskStore.Details.NONE)));
      return store.reload(id);
    }
    assertTrue(await(store.binds.bind(id, "n1", List.of(freeCard()))).bound());
    if (status == TaskStatus.SCHEDULED) {
      return store.reload(id);
    }
    assertTrue(await(store.tasks.transition(id, TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)));
    if (status != TaskStatus.RUNNING) {
      assertTrue(await(store.tasks.transition(id, TaskStatus.RUNNING, status, TaskStore.Details.NONE)));
    }
    return store.reload(id);
  }

  private static int nextCard;

  private static int freeCard() {
    return nextCard++;
  }

  @Test
  void everyIllegalTransitionIsRefusedAndNothingChanges() throws Exception {
    Map<TaskStatus, TaskRecord> tasks = new EnumMap<>(TaskStatus.class);
    for (TaskStatus status : TaskStatus.values()) {
      tasks.put(status, taskIn(status));
      assertEquals(status, tasks.get(status).status());
    }
    int refused = 0;
    for (TaskStatus from : TaskStatus.values()) {
      for (TaskStatus to : TaskStatus.values()) {
        if (from.canBecome(to)) {
          continue;
        }
        TaskRecord before = tasks.get(from);
        assertThrows(IllegalTransitionException.class,
            () -> await(store.tasks.transition(before.id(), from, to, TaskStore.Details.NONE)), from + " → " + to);
        TaskRecord after = store.reload(before.id());
        assertEquals(from, after.status());
        assertEquals(before.version(), after.version(), "nothing written for " + from + " → " + to);
        refused++;
      }
    }
    assertEquals(49, refused);
  }

  @Test
  void casLosesWhenTheTaskIsNoLongerInTheExpectedState() throws Exception {
    TaskRecord running = taskIn(TaskStatus.RUNNING);
    assertFalse(await(store.tasks.transition(running.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING,
        TaskStore.Details.NONE)));
    assertFalse(await(store.tasks.transition(running.id(), TaskStatus.PENDING, TaskStatus.STOPPED,
        TaskStore.Details.NONE)));
    assertEquals(running.version(), store.reload(running.id()).version());
  }

  @Test
  void terminalStateReleasesCardsAndBalancesTheLedger() throws Exception {
    TaskRecord running = taskIn(TaskStatus.RUNNING);
    long usedBefore = store.count("SELECT gpu_used FROM nodes WHERE id = 'n1'");
    assertTrue(await(store.tasks.transition(running.id(), TaskStatus.RUNNING, TaskStatus.SUCCEEDED,
        new TaskStore.Details(0, "done", null, "exited with code 0"))));
    assertEquals(usedBefore - 1, store.count("SELECT gpu_used FROM nodes WHERE id = 'n1'"));
    assertEquals(0, store.count("SELECT count(*) FROM allocations WHERE task_id = $1 AND active", running.id()));
    assertEquals(0, store.count("SELECT sum(delta) FROM gpu_ledger WHERE task_id = $1", running.id()));
    TaskRecord done = store.reload(running.id());
    assertEquals(0, done.exitCode());
    assertTrue(done.finishedAt() != null);
    // a late duplicate report loses its CAS: nothing is released twice
    assertFalse(await(store.tasks.transition(running.id(), TaskStatus.RUNNING, TaskStatus.FAILED,
        TaskStore.Details.NONE)));
    assertEquals(usedBefore - 1, store.count("SELECT gpu_used FROM nodes WHERE id = 'n1'"));
  }

  @Test
  void transitionalStatesStillHoldTheirCards() throws Exception {
    for (TaskStatus transitional : List.of(TaskStatus.STOPPING, TaskStatus.PREEMPTING)) {
      TaskRecord task = taskIn(transitional);
      assertEquals(1, store.count("SELECT count(*) FROM allocations WHERE task_id = $1 AND active", task.id()),
          transitional + " holds its card");
    }
  }

  @Test
  void confirmedPreemptionRequeuesAndIsNeverPreemptibleAgain() throws Exception {
    TaskRecord task = taskIn(TaskStatus.PREEMPTING);
    long usedBefore = store.count("SELECT gpu_used FROM nodes WHERE id = 'n1'");
    assertTrue(await(store.tasks.transition(task.id(), TaskStatus.PREEMPTING, TaskStatus.PENDING,
        new TaskStore.Details(null, null, "Preempted", "preempted"))));
    TaskRecord requeued = store.reload(task.id());
    assertEquals(TaskStatus.PENDING, requeued.status());
    assertNull(requeued.nodeId());
    assertEquals(1, requeued.preemptCount());
    assertFalse(requeued.preemptible());
    assertEquals(0, store.count("SELECT count(*) FROM allocations WHERE task_id = $1 AND active", task.id()));
    assertEquals(usedBefore - 1, store.count("SELECT gpu_used FROM nodes WHERE id = 'n1'"), "its card is returned");
  }

  @Test
  void theDatabaseItselfRefusesOverbookingANode() throws Exception {
    store.node("tiny", 1);
    PgException failure = assertThrows(PgException.class,
        () -> store.query("UPDATE nodes SET gpu_used = 2 WHERE id = 'tiny'"));
    assertTrue(failure.getMessage().contains("gpu_used_within_total"), failure.getMessage());
    PgException training = assertThrows(PgException.class, () -> store.query(
        "UPDATE tasks SET type = 'training', preemptible = true WHERE id = $1", store.task(0).id()));
    assertTrue(training.getMessage().contains("training_never_preemptible"));
  }
}
