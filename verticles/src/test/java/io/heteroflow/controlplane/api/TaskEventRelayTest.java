package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.controlplane.store.TaskEventFeed;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The relay on real PostgreSQL: a row whose lower id commits after a higher one was already relayed is still
 * published, each exactly once, to the tenant's and the admin address; what was there before it started is not.
 */
class TaskEventRelayTest {
  private static final String INSERT = "INSERT INTO task_events (task_id, kind, from_status, to_status, code, message)"
      + " VALUES ($1, 'transition', 'pending', $2, null, $3) RETURNING id";
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  @Test
  void aLowerIdCommittedLateIsPublishedAndNothingTwice() throws Exception {
    TaskRecord task = store.task(0); // its "created" event is older than the relay: never published
    List<String> tenantSaw = new CopyOnWriteArrayList<>();
    List<String> adminSaw = new CopyOnWriteArrayList<>();
    store.vertx.eventBus().<JsonObject>localConsumer(BusAddresses.tenantTaskEvents(task.tenant()),
        m -> tenantSaw.add(m.body().getString("message")));
    store.vertx.eventBus().<JsonObject>localConsumer(BusAddresses.ADMIN_TASK_EVENTS,
        m -> adminSaw.add(m.body().getString("message")));
    await(store.vertx.deployVerticle(new TaskEventRelay(new TaskEventFeed(store.pool), 50, 60_000,
        Clock.systemUTC())));

    SqlConnection slow = await(store.pool.getConnection());
    Transaction open = await(slow.begin());
    await(slow.preparedQuery(INSERT).execute(Tuple.of(task.id(), "scheduled", "lower id, committed late")));
    store.query(INSERT, task.id(), "running", "higher id, committed first");
    eventually(Duration.ofSeconds(5), "the committed row relayed", () -> tenantSaw.size() == 1);
    Thread.sleep(300); // several polls while the gap is open: the higher id is not published again
    assertEquals(List.of("higher id, committed first"), tenantSaw);

    await(open.commit());
    await(slow.close());
    eventually(Duration.ofSeconds(5), "the late row relayed", () -> tenantSaw.size() == 2);
    Thread.sleep(300);
    List<String> expected = List.of("higher id, committed first", "lower id, committed late");
    assertEquals(expected, tenantSaw);
    assertEquals(expected, adminSaw);
  }
}
