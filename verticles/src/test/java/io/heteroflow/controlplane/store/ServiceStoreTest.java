package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The invariants PostgreSQL holds for inference services: a slot advances one generation at a time whoever asks,
 * never has two live replicas, and no replica is made for a slot the service no longer wants or once it stopped.
 */
class ServiceStoreTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(16);

  static ServiceSpec spec(String name, int replicas) {
    TaskSpec template = new TaskSpec(name, "inference", null, List.of("sleep", "600"), Map.of(), 50, false, 0, 0, null,
        List.of(), 1, 0, ServiceSpec.REPLICA_TIMEOUT_SECONDS, 10, null, Map.of(), Map.of());
    return new ServiceSpec(name, null, replicas, template, null, null, QueueRecord.ROOT);
  }

  static long live(UUID service, int slot) throws Exception {
    return await(store.pool.preparedQuery("SELECT count(*) AS n FROM tasks WHERE service_id = $1 AND replica_slot = $2"
        + " AND status IN ('pending', 'scheduled', 'running', 'stopping', 'preempting')")
        .execute(Tuple.of(service, slot))).iterator().next().getLong("n");
  }

  @Test
  void concurrentRebuildersOfOneSlotCreateOneReplica() throws Exception {
    ServiceStore services = new ServiceStore(store.pool);
    GroupRecord service = await(services.create("default", spec("race", 1), false));
    ReplicaSlot first = await(services.slots(List.of(service.id()))).get(service.id()).get(0);
    assertTrue(await(store.tasks.transition(first.taskId(), TaskStatus.PENDING, TaskStatus.STOPPED,
        new TaskStore.Details(null, null, "Test", "ended"))));
    List<Future<Optional<UUID>>> racing = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      racing.add(services.startReplica(service.id(), 0, 1, 0, false));
    }
    await(Future.join(racing));
    assertEquals(1, racing.stream().filter(each -> each.result().isPresent()).count(), "one rebuilder won");
    assertEquals(1, live(service.id(), 0));
    assertEquals(1, await(services.slots(List.of(service.id()))).get(service.id()).get(0).generation());
  }

  @Test
  void aSlotWithALiveReplicaGetsNoSecondOneEvenFromAnotherGeneration() throws Exception {
    ServiceStore services = new ServiceStore(store.pool);
    GroupRecord service = await(services.create("default", spec("slow-start", 1), false));
    // the replica is pending (slow to start): a rebuilder that thinks it ended is refused by the live-slot index
    assertTrue(await(services.startReplica(service.id(), 0, 1, 0, true)).isEmpty());
    assertEquals(1, live(service.id(), 0));
    assertEquals(0, await(services.get(service.id())).orElseThrow().group().rebuilds(), "nothing was written");
  }

  @Test
  void noReplicaForAnUnwantedSlotOrAStoppedService() throws Exception {
    ServiceStore services = new ServiceStore(store.pool);
    GroupRecord service = await(services.create("default", spec("bounded", 1), false));
    assertTrue(await(services.startReplica(service.id(), 1, 0, 0, false)).isEmpty(), "slot 1 is not wanted");
    assertTrue(await(services.slots(List.of(service.id()))).get(service.id()).stream()
        .noneMatch(slot -> slot.slot() == 1), "the slot's advance was rolled back with it");
    GroupRecord scaled = await(services.setReplicas(service, 2, false, null, "scale", "to 2", null)).orElseThrow();
    assertTrue(await(services.setReplicas(service, 3, false, null, "scale", "stale", null)).isEmpty(),
        "a change from a stale version is refused");
    assertTrue(await(services.stop(scaled, "Test", "stopped")).isPresent());
    assertTrue(await(services.startReplica(service.id(), 1, 0, 0, false)).isEmpty(), "the service stopped");
  }
}
