package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.StoreFixture;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Quotas at bind, where PostgreSQL has the last word (SPEC §13): both bind paths refuse a task that would take a
 * queue — or an ancestor — over its max in GPU-equivalents or its max_running, whatever the scheduler thought.
 */
class QuotaBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);

  private static TaskRecord task(String queue, int cards) throws Exception {
    TaskSpec spec = new TaskSpec("q", "job", null, List.of("true"), Map.of(), 50, false, cards, 0, null, List.of(), 0, 0,
        60, 10, null, Map.of(), Map.of(), queue);
    return await(store.tasks.create("default", spec, null, "x")).task();
  }

  @Test
  void bothBindPathsRefuseATaskItsQueuesCannotTake() throws Exception {
    QueueStore queues = new QueueStore(store.pool);
    await(queues.create(new QueueRecord("team", "root", 1, 0, 3.0, null, null, List.of(), null, 0)));
    await(queues.create(new QueueRecord("team-a", "team", 1, 0, 3.0, null, 2, List.of(), null, 0)));
    await(queues.setGpuEquivalents(Map.of("A100", 1.5)));
    store.node("qb-1", 8);
    TaskRecord first = task("team-a", 1);
    TaskRecord second = task("team-a", 1);
    TaskRecord third = task("team-a", 1);
    assertTrue(await(store.binds.bind(first.id(), "qb-1", List.of(0))).bound());
    BatchBindStore.Result batch = await(store.batchBinds.bind(List.of(
        new BindStore.Request(second.id(), "qb-1", List.of(1), null),
        new BindStore.Request(third.id(), "qb-1", List.of(2), null)), null));
    assertTrue(batch.outcomes().get(0).bound(), "3.0 GPU-eq with the second: at the max");
    assertFalse(batch.outcomes().get(1).bound());
    assertEquals("QuotaExceeded", batch.outcomes().get(1).code().name());
    assertEquals("queue root/team/team-a uses 3.0 of 3.0 GPU-eq; this task needs 1.5",
        batch.outcomes().get(1).message());
    BindStore.Outcome alone = await(store.binds.bind(third.id(), "qb-1", List.of(2)));
    assertFalse(alone.bound(), "the single bind path refuses it too");
    assertEquals("QuotaExceeded", alone.code().name());
    await(queues.setGpuEquivalents(Map.of("A100", 0.5)));
    BindStore.Outcome running = await(store.binds.bind(third.id(), "qb-1", List.of(2)));
    assertFalse(running.bound(), "1.5 GPU-eq fits now, but team-a runs at most 2 tasks");
    assertTrue(running.message().contains("3 active tasks (max 2)"), running.message());
    assertEquals(2, store.count("SELECT count(*) FROM tasks WHERE queue = 'team-a' AND status = 'scheduled'"));
  }
}
