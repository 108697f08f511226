package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The batch bind on real PostgreSQL: each request is re-checked against live rows and the requests admitted
 * before it, a refused one leaves its task pending while the rest bind, and concurrent batches never book a
 * card twice.
 */
class BatchBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(16);

  private static BindStore.Request whole(TaskRecord task, String node, Integer... cards) {
    return new BindStore.Request(task.id(), node, List.of(cards), null);
  }

  private static BindStore.Request shard(TaskRecord task, String node, int card, long memoryMb) {
    return new BindStore.Request(task.id(), node, List.of(), new ShardAssignment(card, memoryMb, 10, "mps"));
  }

  @Test
  void eachRequestIsCheckedAgainstTheOnesBeforeItAndRefusalsStayPending() throws Exception {
    store.node("bb-1", 4);
    store.node("bb-2", 2); // 81920 MB cards: 73728 MB for shards each
    TaskRecord pair = store.task(2);
    TaskRecord clash = store.task(1);
    TaskRecord taken = store.task(1);
    assertTrue(await(store.binds.bind(taken.id(), "bb-1", List.of(3))).bound());
    TaskRecord bigShard = store.task(0);
    TaskRecord overflow = store.task(0);
    TaskRecord nowhere = store.task(1);
    TaskRecord serviceA = store.task("inference", 1);
    TaskRecord serviceB = store.task("inference", 0);
    List<BindStore.Request> batch = List.of(whole(pair, "bb-1", 0, 1), whole(clash, "bb-1", 1),
        whole(taken, "bb-1", 2), shard(bigShard, "bb-2", 0, 70000), shard(overflow, "bb-2", 0, 4000),
        whole(nowhere, "bb-missing", 0), whole(serviceA, "bb-2", 1), shard(serviceB, "bb-2", 0, 1000));
    BatchBindStore.Result result = await(store.batchBinds.bind(batch, null));
    List<BindStore.Outcome> outcomes = result.outcomes();

    assertEquals(8, outcomes.size());
    assertTrue(outcomes.get(0).bound());
    assertEquals("BindConflict", outcomes.get(1).code().name());
    assertEquals("a picked card is no longer free", outcomes.get(1).message());
    assertTrue(outcomes.get(2).lostClaim(), "an already scheduled task is a lost claim");
    assertTrue(outcomes.get(3).bound());
    assertEquals("ShardAllocationFailed", outcomes.get(4).code().name());
    assertTrue(outcomes.get(4).message().contains("3728 MB left"), outcomes.get(4).message());
    assertEquals("NoSchedulableNodes", outcomes.get(5).code().name());
    assertEquals(8000, outcomes.get(6).hostPort());
    assertEquals(8001, outcomes.get(7).hostPort(), "the second service on the node gets the next port");

    assertEquals(3, store.count("SELECT gpu_used FROM nodes WHERE id = 'bb-1'"));
    assertEquals(store.count("SELECT version FROM nodes WHERE id = 'bb-1'"), result.nodeVersions().get("bb-1"),
        "the batch reports each node's version after it");
    assertEquals(1, store.count("SELECT gpu_used FROM nodes WHERE id = 'bb-2'"));
    assertEquals(List.of(0, 1), store.reload(pair.id()).gpuIndices());
    assertEquals(TaskStatus.SCHEDULED, store.reload(serviceB.id()).status());
    for (TaskRecord refused : List.of(clash, overflow, nowhere)) {
      TaskRecord after = store.reload(refused.id());
      assertEquals(TaskStatus.PENDING, after.status());
      assertNull(after.nodeId());
      assertEquals(0, store.count("SELECT count(*) FROM allocations WHERE task_id = $1", refused.id()));
    }
    assertEquals(2, store.count("SELECT count(*) FROM allocations WHERE node_id = 'bb-2' AND kind = 'shard'"));
    assertEquals(4, store.count("SELECT coalesce(sum(delta), 0) FROM gpu_ledger WHERE node_id IN ('bb-1', 'bb-2')"));
    assertEquals(1, store.count("SELECT count(*) FROM task_events WHERE task_id = $1 AND to_status = 'scheduled'"
        + " AND message = 'bound to bb-1 cards [0, 1]'", pair.id()));
  }

  @Test
  void aPassedTermWritesNothing() throws Exception {
    store.node("bb-fenced", 2);
    TaskRecord task = store.task(1);
    List<BindStore.Outcome> outcomes = await(store.batchBinds.bind(List.of(whole(task, "bb-fenced", 0)),
        new LeaderStore.Fence("nobody", 99))).outcomes();
    assertTrue(outcomes.get(0).fenced());
    assertFalse(outcomes.get(0).bound());
    assertEquals(TaskStatus.PENDING, store.reload(task.id()).status());
    assertEquals(0, store.count("SELECT gpu_used FROM nodes WHERE id = 'bb-fenced'"));
  }

  @Test
  void concurrentBatchesOverTheSameCardsBookEachCardOnce() throws Exception {
    store.node("bb-race-1", 8);
    store.node("bb-race-2", 8);
    List<Future<BatchBindStore.Result>> batches = new ArrayList<>();
    List<UUID> all = new ArrayList<>();
    for (int b = 0; b < 12; b++) {
      List<BindStore.Request> batch = new ArrayList<>();
      for (int card = 0; card < 8; card++) {
        TaskRecord task = store.task(1);
        all.add(task.id());
        batch.add(whole(task, (card + b) % 2 == 0 ? "bb-race-1" : "bb-race-2", (card / 2 + b) % 8));
      }
      batches.add(store.batchBinds.bind(batch, null));
    }
    await(Future.join(batches));
    long bound = batches.stream().flatMap(batch -> batch.result().outcomes().stream()).filter(BindStore.Outcome::bound).count();
    assertEquals(16, store.count("SELECT count(*) FROM allocations WHERE node_id LIKE 'bb-race-%' AND active"));
    assertEquals(16, bound, "every card of both nodes is booked exactly once");
    assertEquals(16, store.count("SELECT sum(gpu_used) FROM nodes WHERE id LIKE 'bb-race-%'"));
    assertEquals(16, store.count("SELECT count(*) FROM tasks WHERE id = ANY($1) AND status = 'scheduled'",
        (Object) all.toArray(new UUID[0])));
  }
}
