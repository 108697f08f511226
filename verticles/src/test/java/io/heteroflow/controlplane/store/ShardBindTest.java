package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The bind transaction's own shard checks: a failed shard allocation leaves the task pending, nothing half-bound. */
class ShardBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);

  @BeforeAll
  static void start() throws Exception {
    store.node("sh", 2); // 81920 MB cards: 73728 MB for shards each
  }

  @Test
  void aShardPastTheCardsCapacityRollsBackToPending() throws Exception {
    TaskRecord first = store.task(0);
    assertTrue(await(store.binds.bind(first.id(), "sh", List.of(), new ShardAssignment(0, 70000, 85, "mps"), null)).bound());
    TaskRecord second = store.task(0);
    BindStore.Outcome refused = await(store.binds.bind(second.id(), "sh", List.of(),
        new ShardAssignment(0, 4000, 5, "mps"), null));
    assertFalse(refused.bound());
    assertEquals("ShardAllocationFailed", refused.code().name());
    assertTrue(refused.message().contains("3728 MB left"), refused.message());
    TaskRecord after = store.reload(second.id());
    assertEquals(TaskStatus.PENDING, after.status());
    assertEquals(null, after.nodeId());
    assertEquals(null, after.shard());
    assertEquals(0, store.count("SELECT count(*) FROM allocations WHERE task_id = $1", second.id()));
  }

  @Test
  void wholeCardsAndShardsNeverMix() throws Exception {
    TaskRecord shard = store.task(0);
    assertTrue(await(store.binds.bind(shard.id(), "sh", List.of(), new ShardAssignment(1, 1000, 1, "mps"), null)).bound());
    BindStore.Outcome whole = await(store.binds.bind(store.task(1).id(), "sh", List.of(1)));
    assertEquals("BindConflict", whole.code().name());
    assertTrue(await(store.tasks.transition(shard.id(), TaskStatus.SCHEDULED, TaskStatus.STOPPING, TaskStore.Details.NONE)));
    assertTrue(await(store.tasks.transition(shard.id(), TaskStatus.STOPPING, TaskStatus.STOPPED, TaskStore.Details.NONE)));
    assertTrue(await(store.binds.bind(store.task(1).id(), "sh", List.of(1))).bound(), "the shard was released");
    BindStore.Outcome onWhole = await(store.binds.bind(store.task(0).id(), "sh", List.of(),
        new ShardAssignment(1, 1000, 1, "mps"), null));
    assertEquals("ShardAllocationFailed", onWhole.code().name());
  }
}
