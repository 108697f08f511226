package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.controlplane.store.PreemptionStore;
import io.heteroflow.testsupport.StoreFixture;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The leader's snapshot between rounds on real PostgreSQL: it follows every write and forgets refused stagings. */
class SnapshotCacheTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);
  private static SnapshotCache cache;

  @BeforeAll
  static void start() throws Exception {
    cache = new SnapshotCache(store.nodes, new PreemptionStore(store.pool), new PluginConfigStore(store.pool),
        BuiltInPlugins.registry(SchedulerConfig.defaults()), java.time.Clock.systemUTC());
    store.node("sc-1", 4);
    store.node("sc-2", 4);
  }

  @Test
  void followsWritesAndForgetsAStagedPlacementThatNeverBound() throws Exception {
    Snapshot first = await(cache.refresh());
    assertEquals(0, first.node("sc-1").gpuUsed());

    assertTrue(await(store.binds.bind(store.task(2).id(), "sc-1", List.of(0, 1))).bound());
    Snapshot second = await(cache.refresh());
    assertSame(first, second, "the same snapshot, brought up to date");
    assertEquals(2, second.node("sc-1").gpuUsed());
    assertEquals(1, second.node("sc-1").use(0).wholeTasks());

    // a round stages a placement on sc-2; while its bind is in flight the staged view stays, even when the
    // node changes in PostgreSQL meanwhile (here: a heartbeat)
    second.assume(store.task(3).toRequest(), Decision.placed("sc-2", List.of(0, 1, 2), null, 1));
    cache.staged("sc-2");
    store.query("UPDATE nodes SET cpu_percent = 7, version = version + 1 WHERE id = 'sc-2'");
    assertEquals(3, await(cache.refresh()).node("sc-2").gpuUsed(), "the staged view while the bind is in flight");
    // the bind is refused: nothing changed in PostgreSQL, yet the node is read again
    cache.settled("sc-2", null);
    Snapshot third = await(cache.refresh());
    assertEquals(0, third.node("sc-2").gpuUsed(), "read again from PostgreSQL");
    assertEquals(7.0, third.node("sc-2").cpuPercent());

    // a batch in which every bind to the node bound reports the node's version after it: one more than the
    // snapshot knew means nobody else wrote, so the staged view stands without a read
    long version = store.count("SELECT version FROM nodes WHERE id = 'sc-2'");
    third.assume(store.task(1).toRequest(), Decision.placed("sc-2", List.of(3), null, 1));
    cache.staged("sc-2");
    store.query("UPDATE nodes SET version = version + 1 WHERE id = 'sc-2'"); // the batch's one write (simulated)
    cache.settled("sc-2", version + 1);
    assertEquals(1, await(cache.refresh()).node("sc-2").gpuUsed(), "kept: not read again");
    // another writer came in between (the version moved by two): read again
    third.assume(store.task(1).toRequest(), Decision.placed("sc-2", List.of(2), null, 1));
    cache.staged("sc-2");
    store.query("UPDATE nodes SET version = version + 2 WHERE id = 'sc-2'");
    cache.settled("sc-2", version + 3);
    assertEquals(0, await(cache.refresh()).node("sc-2").gpuUsed(), "read again");
    // our bind commits (one write), then a heartbeat lands and a round reads while the bind is still in flight:
    // the node is skipped then and the watermark passes both writes, yet the exact settle does not hide the
    // heartbeat: the node is read again
    version = store.count("SELECT version FROM nodes WHERE id = 'sc-2'");
    third.assume(store.task(1).toRequest(), Decision.placed("sc-2", List.of(2), null, 1));
    cache.staged("sc-2");
    store.query("UPDATE nodes SET version = version + 1 WHERE id = 'sc-2'"); // the batch's write (simulated)
    store.query("UPDATE nodes SET cpu_percent = 9, version = version + 1 WHERE id = 'sc-2'");
    assertEquals(1, await(cache.refresh()).node("sc-2").gpuUsed(), "staged while in flight");
    cache.settled("sc-2", version + 1);
    assertEquals(9.0, await(cache.refresh()).node("sc-2").cpuPercent(), "the heartbeat seen while in flight");
    // a write after the last read is found by the next one, however quiet the node was before
    store.query("UPDATE nodes SET cpu_percent = 11, version = version + 1 WHERE id = 'sc-1'");
    assertEquals(11.0, await(cache.refresh()).node("sc-1").cpuPercent());

    store.node("sc-3", 8);
    assertEquals(8, await(cache.refresh()).node("sc-3").gpuTotal(), "a new node appears");

    store.query("INSERT INTO share_groups (name) VALUES ('sc-group')");
    store.query("INSERT INTO share_group_members (group_name, tenant) VALUES ('sc-group', 'default')");
    Snapshot afterBoundary = await(cache.refresh());
    assertNotSame(third, afterBoundary, "a new tenant boundary starts a fresh snapshot");
    assertEquals(2, afterBoundary.node("sc-1").gpuUsed());
    assertEquals(3, afterBoundary.size());
  }
}
