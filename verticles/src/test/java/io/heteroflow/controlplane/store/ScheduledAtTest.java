package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code scheduled_at} is the clock's time as the bind commits, not the time its transaction began: a bind held
 * up just before its last statement (its transition event waits for a lock on task_events) stamps a time after
 * the lock was let go, and no later than the client sees the bind done. now() (the transaction's start) would be
 * before the lock was let go, and so would the clock read by any statement before the event's.
 */
class ScheduledAtTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(8);

  @Test
  void theBatchBindStampsScheduledAtAsItCommits() throws Exception {
    store.node("stamp-batch", 2);
    TaskRecord task = store.task(1);
    assertStampedAtCommit(task, () -> store.batchBinds.bind(List.of(new BindStore.Request(task.id(),
        "stamp-batch", List.of(0), null)), null).map(result -> result.outcomes().get(0)));
  }

  @Test
  void theSingleBindStampsScheduledAtAsItCommits() throws Exception {
    store.node("stamp-single", 2);
    TaskRecord task = store.task(1);
    assertStampedAtCommit(task, () -> store.binds.bind(task.id(), "stamp-single", List.of(0)));
  }

  /**
   * Holds a lock on task_events in another transaction that keeps its rows from being inserted, starts the bind
   * (it does all its work up to the transition event, then waits), notes the waiting transaction's start and the
   * database clock as the lock is let go, and compares the task's scheduled_at with both and with the clock once
   * the bind is done.
   */
  private static void assertStampedAtCommit(TaskRecord task,
                                            java.util.function.Supplier<Future<BindStore.Outcome>> bind)
      throws Exception {
    SqlConnection holder = await(store.pool.getConnection());
    try {
      Transaction held = await(holder.begin());
      await(holder.query("LOCK TABLE task_events IN SHARE MODE").execute());
      Future<BindStore.Outcome> bound = bind.get();
      OffsetDateTime[] bindBegan = new OffsetDateTime[1];
      ControlPlaneHarness.eventually(Duration.ofSeconds(10), "the bind waiting to insert its event", () -> {
        // asked outside the holder's transaction, which would keep seeing its first view of pg_stat_activity
        Row waiting = first(store.pool, "SELECT xact_start FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            + " AND datname = current_database() AND pid <> pg_backend_pid()");
        bindBegan[0] = waiting == null ? null : waiting.getOffsetDateTime(0);
        return bindBegan[0] != null;
      });
      assertFalse(bound.isComplete(), "the bind waits for the lock");
      OffsetDateTime released = first(holder, "SELECT clock_timestamp()").getOffsetDateTime(0);
      await(held.commit());
      assertTrue(await(bound).bound());
      OffsetDateTime seenDone = first(holder, "SELECT clock_timestamp()").getOffsetDateTime(0);
      OffsetDateTime stamped = store.reload(task.id()).scheduledAt();
      assertTrue(released.isAfter(bindBegan[0]), "the bind's transaction began before the lock was let go");
      assertTrue(stamped.isAfter(released), "scheduled_at " + stamped + " is after the lock was let go at "
          + released + " (the bind's transaction began at " + bindBegan[0] + ")");
      assertFalse(stamped.isAfter(seenDone), "scheduled_at " + stamped + " is no later than the client saw the"
          + " bind done at " + seenDone);
    } finally {
      await(holder.close());
    }
  }

  private static Row first(io.vertx.sqlclient.SqlClient conn, String sql) {
    try {
      var rows = await(conn.query(sql).execute());
      return rows.size() == 0 ? null : rows.iterator().next();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
