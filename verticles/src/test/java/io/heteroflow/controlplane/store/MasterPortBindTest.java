package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.pgclient.PgException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every bound task gets its own MASTER_PORT from the node's master port range, on both bind paths: two active
 * tasks on one node never share one (PostgreSQL's partial unique index is the last word), a port is free again
 * once its task has ended, and a node whose range is used up refuses the bind with PortsExhausted.
 */
class MasterPortBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);

  private static BindStore.Request whole(TaskRecord task, String node, Integer... cards) {
    return new BindStore.Request(task.id(), node, List.of(cards), null);
  }

  @Test
  void twoTasksOnOneNodeGetDifferentPortsOnBothBindPaths() throws Exception {
    store.node("mp-1", 4);
    TaskRecord first = store.task(1);
    TaskRecord second = store.task(1);
    TaskRecord service = store.task("inference", 1);
    TaskRecord cpuOnly = store.task(0);
    List<BindStore.Outcome> batch = await(store.batchBinds.bind(List.of(whole(first, "mp-1", 0),
        whole(second, "mp-1", 1), whole(service, "mp-1", 2)), null)).outcomes();
    assertEquals(29500, batch.get(0).masterPort());
    assertEquals(29501, batch.get(1).masterPort(), "the second task of the batch on the node gets the next port");
    assertEquals(29502, batch.get(2).masterPort());
    assertEquals(8000, batch.get(2).hostPort(), "an inference task has a host port besides");
    BindStore.Outcome alone = await(store.binds.bind(cpuOnly.id(), "mp-1", List.of()));
    assertTrue(alone.bound());
    assertEquals(29503, alone.masterPort(), "a task without cards gets one too, past those the batch took");
    assertEquals(29500, store.reload(first.id()).masterPort());
    assertEquals(29503, store.reload(cpuOnly.id()).masterPort());
    assertEquals(null, store.reload(cpuOnly.id()).hostPort());

    store.node("mp-2", 1);
    TaskRecord elsewhere = store.task(1);
    assertEquals(29500, await(store.binds.bind(elsewhere.id(), "mp-2", List.of(0))).masterPort(),
        "ports are per node: another node starts at the range's first port");
  }

  @Test
  void postgresRefusesTwoActiveTasksWithOneMasterPortOnANode() throws Exception {
    store.node("mp-unique", 2);
    TaskRecord first = store.task(1);
    TaskRecord second = store.task(1);
    assertTrue(await(store.binds.bind(first.id(), "mp-unique", List.of(0))).bound());
    assertTrue(await(store.binds.bind(second.id(), "mp-unique", List.of(1))).bound());
    PgException refused = org.junit.jupiter.api.Assertions.assertThrows(PgException.class,
        () -> store.query("UPDATE tasks SET master_port = $2 WHERE id = $1", second.id(),
            store.reload(first.id()).masterPort()));
    assertEquals("23505", refused.getSqlState(), "unique violation");
  }

  @Test
  void aPortIsFreeAgainOnceItsTaskHasEnded() throws Exception {
    store.node("mp-reuse", 4);
    TaskRecord ending = store.task(1);
    TaskRecord staying = store.task(1);
    assertEquals(29500, await(store.binds.bind(ending.id(), "mp-reuse", List.of(0))).masterPort());
    assertEquals(29501, await(store.binds.bind(staying.id(), "mp-reuse", List.of(1))).masterPort());
    TaskRecord tooEarly = store.task(1);
    assertEquals(29502, await(store.batchBinds.bind(List.of(whole(tooEarly, "mp-reuse", 2)), null))
        .outcomes().get(0).masterPort(), "a running task's port is still held");

    assertTrue(await(store.tasks.transition(ending.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING,
        TaskStore.Details.NONE)));
    assertTrue(await(store.tasks.transition(ending.id(), TaskStatus.RUNNING, TaskStatus.SUCCEEDED,
        TaskStore.Details.NONE)));
    TaskRecord next = store.task(1);
    assertEquals(29500, await(store.batchBinds.bind(List.of(whole(next, "mp-reuse", 0)), null))
        .outcomes().get(0).masterPort(), "the ended task's port is handed out again");
    assertEquals(29500, store.reload(ending.id()).masterPort(), "the ended task keeps its port as history");

    assertTrue(await(store.tasks.transition(staying.id(), TaskStatus.SCHEDULED, TaskStatus.FAILED,
        TaskStore.Details.NONE)));
    TaskRecord afterStop = store.task(1);
    assertEquals(29501, await(store.binds.bind(afterStop.id(), "mp-reuse", List.of(1))).masterPort());
  }

  @Test
  void aUsedUpRangeRefusesTheBindWithPortsExhausted() throws Exception {
    SchedulerConfig tiny = SchedulerConfig.defaults().withMasterPortRange(31000, 31001);
    BindStore single = new BindStore(store.pool, tiny);
    BatchBindStore batches = new BatchBindStore(store.pool, tiny, single);
    store.node("mp-tiny", 4);
    TaskRecord a = store.task(1);
    TaskRecord b = store.task(1);
    TaskRecord c = store.task(1);
    List<BindStore.Outcome> outcomes = await(batches.bind(List.of(whole(a, "mp-tiny", 0), whole(b, "mp-tiny", 1),
        whole(c, "mp-tiny", 2)), null)).outcomes();
    assertEquals(31000, outcomes.get(0).masterPort());
    assertEquals(31001, outcomes.get(1).masterPort());
    assertFalse(outcomes.get(2).bound());
    assertEquals("PortsExhausted", outcomes.get(2).code().name());
    assertEquals("node mp-tiny has no free master port in 31000-31001", outcomes.get(2).message());
    TaskRecord refused = store.reload(c.id());
    assertEquals(TaskStatus.PENDING, refused.status());
    assertNull(refused.masterPort());
    assertEquals(0, store.count("SELECT count(*) FROM allocations WHERE task_id = $1", c.id()));

    BindStore.Outcome alone = await(single.bind(c.id(), "mp-tiny", List.of(2)));
    assertEquals("PortsExhausted", alone.code().name(), "the single bind refuses it too");
    assertEquals(2, store.count("SELECT gpu_used FROM nodes WHERE id = 'mp-tiny'"), "nothing of it stayed");
  }
}
