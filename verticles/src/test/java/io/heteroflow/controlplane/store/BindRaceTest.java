package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Concurrent binders on real PostgreSQL: exactly one winner per task, and no card ever booked twice. */
class BindRaceTest {
  private static final int TASKS = Integer.getInteger("churn.tasks", 300);
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(32);

  @Test
  void manyBindersOfOneTaskHaveExactlyOneWinner() throws Exception {
    store.node("race-a", 32);
    TaskRecord task = store.task(1);
    List<Future<BindStore.Outcome>> attempts = new ArrayList<>();
    for (int card = 0; card < 32; card++) {
      attempts.add(store.binds.bind(task.id(), "race-a", List.of(card)));
    }
    await(Future.join(attempts));
    long winners = attempts.stream().filter(attempt -> attempt.result().bound()).count();
    long silentLosers = attempts.stream().filter(attempt -> attempt.result().lostClaim()).count();
    assertEquals(1, winners);
    assertEquals(31, silentLosers);
    assertEquals(1, store.count("SELECT count(*) FROM allocations WHERE task_id = $1", task.id()));
    assertEquals(1, store.count("SELECT gpu_used FROM nodes WHERE id = 'race-a'"));
  }

  @Test
  void manyTasksRacingForOneCardLeaveOneBookingAndTheRestPending() throws Exception {
    store.node("race-b", 8);
    List<Future<BindStore.Outcome>> attempts = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      attempts.add(store.binds.bind(store.task(1).id(), "race-b", List.of(3)));
    }
    await(Future.join(attempts));
    assertEquals(1, attempts.stream().filter(attempt -> attempt.result().bound()).count());
    assertEquals(1, store.count("SELECT count(*) FROM allocations WHERE node_id = 'race-b'"));
    assertEquals(1, store.count("SELECT gpu_used FROM nodes WHERE id = 'race-b'"));
    assertEquals(23, store.count("SELECT count(*) FROM tasks t WHERE status = 'pending' AND EXISTS"
        + " (SELECT 1 FROM task_events e WHERE e.task_id = t.id) AND NOT EXISTS"
        + " (SELECT 1 FROM allocations a WHERE a.task_id = t.id)"));
  }

  @Test
  void bindAndReleaseChurnNeverOverlapsTwoBookingsOfACard() throws Exception {
    store.node("churn-1", 8);
    store.node("churn-2", 8);
    List<TaskRecord> tasks = new ArrayList<>();
    for (int i = 0; i < TASKS; i++) {
      tasks.add(store.task(1 + (i % 2)));
    }
    AtomicInteger next = new AtomicInteger();
    ExecutorService binders = Executors.newFixedThreadPool(16);
    for (int worker = 0; worker < 16; worker++) {
      binders.execute(() -> {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = next.getAndIncrement(); i < tasks.size(); i = next.getAndIncrement()) {
          TaskRecord task = tasks.get(i);
          try {
            for (int attempt = 0; attempt < 50; attempt++) {
              String node = random.nextBoolean() ? "churn-1" : "churn-2";
              List<Integer> cards = new ArrayList<>();
              while (cards.size() < task.gpuRequired()) {
                int card = random.nextInt(8);
                if (!cards.contains(card)) {
                  cards.add(card);
                }
              }
              if (await(store.binds.bind(task.id(), node, cards)).bound()) {
                await(store.tasks.transition(task.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE));
                await(store.tasks.transition(task.id(), TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStore.Details.NONE));
                break;
              }
            }
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }
      });
    }
    binders.shutdown();
    assertTrue(binders.awaitTermination(120, TimeUnit.SECONDS));

    Map<String, List<Row>> history = new HashMap<>();
    for (Row row : store.query("SELECT node_id, gpu_index, allocated_at, released_at FROM allocations"
        + " WHERE node_id LIKE 'churn-%' ORDER BY node_id, gpu_index, allocated_at")) {
      history.computeIfAbsent(row.getString("node_id") + "/" + row.getInteger("gpu_index"), k -> new ArrayList<>())
          .add(row);
    }
    int bookings = 0;
    for (Map.Entry<String, List<Row>> card : history.entrySet()) {
      OffsetDateTime previousRelease = null;
      for (Row booking : card.getValue()) {
        if (previousRelease != null) {
          assertTrue(!booking.getOffsetDateTime("allocated_at").isBefore(previousRelease),
              "card " + card.getKey() + " booked at " + booking.getOffsetDateTime("allocated_at")
                  + " before its previous booking was released at " + previousRelease);
        }
        previousRelease = booking.getOffsetDateTime("released_at");
        bookings++;
      }
    }
    assertTrue(bookings >= TASKS, "every task was bound once (" + bookings + " bookings)");
    assertEquals(0, store.count("SELECT coalesce(sum(gpu_used), 0) FROM nodes WHERE id LIKE 'churn-%'"));
    assertEquals(0, store.count("SELECT coalesce(sum(delta), 0) FROM gpu_ledger WHERE node_id LIKE 'churn-%'"));
  }
}
