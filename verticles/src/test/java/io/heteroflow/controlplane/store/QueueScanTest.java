package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.testsupport.StoreFixture;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The pending queue's scan cursor: a pass continues after the last task it scanned, and a task of higher priority
 * created after the newest task the pass has seen joins the next round instead of waiting for the pass to end.
 */
class QueueScanTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static TaskRecord task(int priority) throws Exception {
    TaskSpec spec = new TaskSpec("q", "job", null, List.of("true"), Map.of(), priority, false, 1, 0, null, List.of(),
        0, 0, 60, 10, null, Map.of(), Map.of());
    return await(store.tasks.create("default", spec, null, "x")).task();
  }

  @Test
  void higherPriorityNewcomersJoinThePassAndOldOnesDoNotRepeat() throws Exception {
    TaskRecord earlyHigh = task(90);
    TaskRecord a = task(40);
    TaskRecord b = task(40);
    TaskRecord c = task(40);
    List<TaskRecord> first = await(store.tasks.pending(null, 2));
    assertEquals(List.of(earlyHigh.id(), a.id()), first.stream().map(TaskRecord::id).toList());
    TaskRecord last = first.get(1);
    TaskStore.Cursor cursor = new TaskStore.Cursor(last.priority(), last.createdAt(), last.id(), last.createdAt());

    TaskRecord lateHigh = task(80);
    TaskRecord lateLow = task(10);
    List<UUID> next = await(store.tasks.pending(cursor, 10)).stream().map(TaskRecord::id).toList();
    assertEquals(List.of(lateHigh.id(), b.id(), c.id(), lateLow.id()), next,
        "the newcomer of higher priority first, then the pass goes on; the early high-priority task is not repeated");
  }
}
