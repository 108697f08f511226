package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.StoreFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Training borrow at bind, where PostgreSQL has the last word (SPEC §14, defaults: borrow_idle_seconds 600,
 * training_borrow_percent 20): a training task its queue's max refuses binds on a lender idle long enough, charged to
 * the lender ({@code borrowed_from}); the bind refuses a borrow past 20 % of the lender's guarantee, past what the
 * lender leaves unused of it, from a lender not idle long enough, and for anything but training.
 */
class TrainingBorrowBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);
  private static QueueStore queues;

  @BeforeAll
  static void fleet() throws Exception {
    queues = new QueueStore(store.pool);
    store.node("tb-1", 8);
    store.node("tb-2", 8);
    store.node("tb-3", 8);
    store.node("tb-4", 8);
  }

  private static TaskRecord task(String queue, String type) throws Exception {
    TaskSpec spec = new TaskSpec("b", type, null, List.of("true"), Map.of(), 50, false, 1, 0, null, List.of(), 0, 0,
        60, 10, null, Map.of(), Map.of(), queue);
    return await(store.tasks.create("default", spec, null, "x")).task();
  }

  private static void queue(String name, double guaranteed, Double max) throws Exception {
    await(queues.create(new QueueRecord(name, "root", 1, guaranteed, max, null, null, List.of(), null, 0)));
  }

  private static BatchBindStore.Result bind(String node, List<TaskRecord> tasks, int firstCard) throws Exception {
    List<BindStore.Request> requests = new ArrayList<>();
    for (int i = 0; i < tasks.size(); i++) {
      requests.add(new BindStore.Request(tasks.get(i).id(), node, List.of(firstCard + i), null));
    }
    return await(store.batchBinds.bind(requests, null));
  }

  private static String lender(TaskRecord task) throws Exception {
    return store.query("SELECT borrowed_from FROM tasks WHERE id = $1", task.id()).iterator().next()
        .getString("borrowed_from");
  }

  @Test
  void atMostTwentyPercentOfAnIdleLendersGuaranteeAndOnlyForTraining() throws Exception {
    queue("lender", 5, null);
    queue("full", 1, 1.0);
    store.query("UPDATE queues SET idle_since = now() - interval '1 hour' WHERE name = 'lender'");
    TaskRecord own = task("full", "training");
    TaskRecord borrows = task("full", "training");
    TaskRecord pastPercent = task("full", "training");
    TaskRecord job = task("full", "job");
    BatchBindStore.Result result = bind("tb-1", List.of(own, borrows, pastPercent, job), 0);
    assertTrue(result.outcomes().get(0).bound(), "within its own max");
    assertNull(lender(own));
    assertTrue(result.outcomes().get(1).bound(), "over its max: on the lender's idle guarantee");
    assertEquals("lender", lender(borrows));
    assertFalse(result.outcomes().get(2).bound(), "1.0 lent is 20 % of 5: no more");
    assertEquals("QuotaExceeded", result.outcomes().get(2).code().name());
    assertFalse(result.outcomes().get(3).bound(), "only training borrows");
    assertEquals("QuotaExceeded", result.outcomes().get(3).code().name());
    Map<String, Double> usage = new java.util.HashMap<>();
    await(queues.usage()).forEach((queue, use) -> usage.put(queue, use.gpuEq()));
    assertEquals(1.0, usage.get("full"), 1e-9, "the borrowed card is not charged to its own queue's max");
    assertEquals(1.0, usage.get("lender"), 1e-9, "it is charged to the lender");
    QueueStore.Borrowing borrowing = await(queues.borrowing());
    assertEquals(1.0, borrowing.borrowed().get("full"), 1e-9);
    assertEquals(1.0, borrowing.lent().get("lender"), 1e-9);
    BindStore.Outcome alone = await(store.binds.bind(pastPercent.id(), "tb-1", List.of(2)));
    assertFalse(alone.bound(), "the single bind path never borrows");
  }

  @Test
  void theLendersOwnUseAndIdlenessBoundWhatItLends() throws Exception {
    queue("busy", 10, null);
    queue("fresh", 2, null);
    queue("capped", 1, 1.0);
    // busy has been idle an hour but now uses 9 of its 10: 1.0 left to lend though 20 % would be 2.0
    store.query("UPDATE queues SET idle_since = now() - interval '1 hour' WHERE name = 'busy'");
    List<TaskRecord> busyJobs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      busyJobs.add(task("busy", "job"));
    }
    assertTrue(bind("tb-2", busyJobs, 0).outcomes().stream().allMatch(BindStore.Outcome::bound));
    assertTrue(bind("tb-3", List.of(task("busy", "job")), 0).outcomes().get(0).bound());
    TaskRecord own = task("capped", "training");
    TaskRecord first = task("capped", "training");
    TaskRecord second = task("capped", "training");
    BatchBindStore.Result result = bind("tb-3", List.of(own, first, second), 1);
    assertTrue(result.outcomes().get(0).bound());
    assertTrue(result.outcomes().get(1).bound(), "busy's last idle GPU-eq");
    assertEquals("busy", lender(first));
    assertFalse(result.outcomes().get(2).bound(), "busy's guarantee is honoured from the rest: 9 + 1 lent = 10");
    assertTrue(result.outcomes().get(2).message().contains("queue root/capped uses 1.0 of 1.0 GPU-eq"),
        result.outcomes().get(2).message());
    // fresh was created a moment ago: idle, but not for borrow_idle_seconds (600)
    assertEquals(0, store.count("SELECT count(*) FROM tasks WHERE borrowed_from = 'fresh'"));
    assertEquals(1, store.count("SELECT count(*) FROM queues WHERE name = 'fresh' AND idle_since IS NOT NULL"),
        "a new queue with a guarantee is idle from its creation");
  }

  @Test
  void thePatrolKeepsIdlenessByOwnUseAndFindsTrainingWaitingToBorrow() throws Exception {
    queue("patrolled", 5, null);
    queue("small", 0.5, 1.0);
    store.query("UPDATE queues SET idle_since = now() - interval '1 hour' WHERE name = 'patrolled'");
    TaskRecord own = task("small", "training");
    TaskRecord borrows = task("small", "training");
    TaskRecord waits = task("small", "training");
    BatchBindStore.Result result = bind("tb-4", List.of(own, borrows), 0);
    assertTrue(result.outcomes().stream().allMatch(BindStore.Outcome::bound));
    assertEquals("patrolled", lender(borrows));
    await(store.tasks.setReason(waits.id(), "QuotaExceeded", "queue root/small uses 1.0 of 1.0 GPU-eq; this task needs 1.0"));
    await(queues.markIdle());
    assertEquals(1, store.count("SELECT count(*) FROM queues WHERE name = 'patrolled'"
        + " AND idle_since < now() - interval '59 minutes'"), "lent capacity aside it is still idle, since then");
    assertEquals(1, store.count("SELECT count(*) FROM queues WHERE name = 'small' AND idle_since IS NULL"),
        "its own use is at its guarantee: not idle");
    assertTrue(await(queues.trainingWaitingToBorrow(600)).contains(waits.id()));
    assertFalse(await(queues.trainingWaitingToBorrow(600)).contains(own.id()), "a bound task waits for nothing");
    assertFalse(await(queues.trainingWaitingToBorrow(7200)).contains(waits.id()), "no queue idle two hours");
  }
}
