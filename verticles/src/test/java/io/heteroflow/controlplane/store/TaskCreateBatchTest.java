package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Creates that arrive together share a transaction, yet each keeps its own answer: idempotency keys still
 * resolve to one task, and a create PostgreSQL refuses fails alone.
 */
class TaskCreateBatchTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static TaskSpec spec(String name, String type, boolean preemptible) {
    return new TaskSpec(name, type, null, List.of("true"), Map.of(), 50, preemptible, 1, 0, null, List.of(), 0, 0,
        60, 10, null, Map.of(), Map.of());
  }

  @Test
  void aBurstOfCreatesKeepsIdempotencyAndIsolatesARefusedOne() throws Exception {
    List<Future<TaskStore.Created>> creates = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      String key = i < 20 ? "burst-key-" + (i % 10) : null; // ten keys, each used twice
      creates.add(store.tasks.create("default", spec("burst-" + i, "job", false), key, "sha-" + (i % 10)));
    }
    Future<TaskStore.Created> refused = store.tasks.create("default", spec("bad", "training", true), null, "x");
    Future<TaskStore.Created> after = store.tasks.create("default", spec("after", "job", false), null, "y");
    await(Future.join(creates));
    assertTrue(creates.stream().allMatch(Future::succeeded));
    for (int key = 0; key < 10; key++) {
      TaskStore.Created first = creates.get(key).result();
      TaskStore.Created second = creates.get(key + 10).result();
      assertEquals(first.task().id(), second.task().id(), "one task per idempotency key");
      assertTrue(first.created() != second.created(), "exactly one of the two created it");
      assertFalse(second.keyReusedWithOtherBody());
    }
    assertEquals(90, store.count("SELECT count(*) FROM tasks WHERE name LIKE 'burst-%'"));
    assertEquals(90, store.count("SELECT count(*) FROM task_events e JOIN tasks t ON t.id = e.task_id"
        + " WHERE t.name LIKE 'burst-%' AND e.message = 'created'"));
    assertTrue(await(after).created(), "a create next to a refused one still succeeds");
    assertThrows(Exception.class, () -> await(refused),
        "the training task that asks to be preemptible is refused by PostgreSQL");
    assertEquals(0, store.count("SELECT count(*) FROM tasks WHERE name = 'bad'"));
  }
}
