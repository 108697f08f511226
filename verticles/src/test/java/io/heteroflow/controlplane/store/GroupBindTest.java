package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.heteroflow.testsupport.ControlPlaneHarness;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A group's bind on real PostgreSQL (SPEC §9): one transaction binds every member or none. A watcher on its own
 * connection reads the members' states all along, through a refused bind and a race with a concurrent binder:
 * it never sees part of the group scheduled.
 */
class GroupBindTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(16);

  private static GroupSpec workers(String name, int count, int cards) {
    List<TaskSpec> members = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      members.add(new TaskSpec(name + "-" + i, "training", null, List.of("true"), Map.of(), 50, false, cards, 0, null,
          List.of(), 0, 0, 60, 10, null, Map.of(), Map.of()));
    }
    return new GroupSpec(name, "training", null, null, 0, members);
  }

  private static List<BindStore.Request> onNodes(GroupStore.Group group, String... nodes) {
    List<BindStore.Request> requests = new ArrayList<>();
    for (int rank = 0; rank < nodes.length; rank++) {
      requests.add(new BindStore.Request(group.members().get(rank).id(), nodes[rank],
          List.of(0, 1, 2, 3, 4, 5, 6, 7), null));
    }
    return requests;
  }

  private static JsonArray ip(String cidr) {
    return new JsonArray().add(cidr);
  }

  @Test
  void aGroupBindsEveryMemberInOneTransactionOrNoneEvenAgainstAConcurrentBinder() throws Exception {
    for (int i = 1; i <= 4; i++) {
      store.node("g-" + i, 8, ip("10.1.0." + i + "/24"));
    }
    GroupStore groups = new GroupStore(store.pool, new BatchBindStore(store.pool, SchedulerConfig.defaults(),
        store.binds));
    TaskRecord occupant = store.task(1);
    assertTrue(await(store.binds.bind(occupant.id(), "g-4", List.of(5))).bound(), "g-4 is not wholly free");
    GroupStore.Group group = await(groups.create("default", workers("gang", 4, 8)));
    UUID id = group.group().id();

    Set<Long> seen = ConcurrentHashMap.newKeySet();
    AtomicBoolean watching = new AtomicBoolean(true);
    Thread watcher = new Thread(() -> {
      while (watching.get()) {
        try {
          seen.add(store.count("SELECT count(*) FROM tasks WHERE group_id = $1 AND status <> 'pending'", id));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
    });
    watcher.start();
    // the watcher has seen the group before any bind (on a loaded machine it may otherwise start too late)
    ControlPlaneHarness.eventually(java.time.Duration.ofSeconds(20), "the watcher's first look", () -> !seen.isEmpty());
    try {
      GroupStore.Bound refused = await(groups.bind(group.group(), onNodes(group, "g-1", "g-2", "g-3", "g-4"), null));
      assertFalse(refused.bound());
      assertEquals("BindConflict", refused.code().name(), refused.message());
      assertEquals(0, store.count("SELECT count(*) FROM allocations a JOIN tasks t ON t.id = a.task_id"
          + " WHERE t.group_id = $1", id), "nothing of a refused group was ever written");
      assertEquals("pending", group(groups, id).group().status());

      // the race: a single task wants card 0 of g-1 while the group binds (its rank 0 asks for all of g-1)
      end(occupant);
      TaskRecord rival = store.task(1);
      Future<GroupStore.Bound> gang = groups.bind(group.group(), onNodes(group, "g-1", "g-2", "g-3", "g-4"), null);
      Future<BatchBindStore.Result> single = store.batchBinds.bind(
          List.of(new BindStore.Request(rival.id(), "g-1", List.of(0), null)), null);
      boolean gangWon = await(gang).bound();
      boolean singleWon = await(single).outcomes().get(0).bound();
      assertTrue(gangWon != singleWon, "exactly one of them got card 0 of g-1: gang " + gangWon + ", single " + singleWon);
      if (!gangWon) {
        end(rival);
        assertTrue(await(groups.bind(group.group(), onNodes(group, "g-1", "g-2", "g-3", "g-4"), null)).bound());
      }
    } finally {
      watching.set(false);
      watcher.join();
    }
    assertTrue(Set.of(0L, 4L).containsAll(seen), "the watcher saw only none or all of the group placed: " + seen);
    assertTrue(seen.contains(0L) && seen.contains(4L), "it watched both sides: " + seen);
    assertEquals(1, store.count("SELECT count(DISTINCT xmin::text) FROM tasks WHERE group_id = $1", id),
        "all four members were written by one transaction");
    GroupStore.Group bound = group(groups, id);
    assertEquals("scheduled", bound.group().status());
    assertEquals("g-1", bound.group().masterNode());
    assertEquals("10.1.0.1", bound.group().masterAddr(), "one subnet: rank 0's internal address");
    assertEquals("nccl", bound.group().backend());
    assertEquals(bound.members().get(0).masterPort(), bound.group().masterPort(), "rank 0's own reserved port");
    for (TaskRecord member : bound.members()) {
      assertEquals(TaskStatus.SCHEDULED, member.status());
      JsonObject world = member.distributed();
      assertEquals(4, world.getInteger("world_size"));
      assertEquals(member.groupRank(), world.getInteger("rank"));
      assertEquals("10.1.0.1", world.getString("master_addr"));
      assertEquals(member.groupRank(), member.run().distributed().rank(), "the Run carries the member's rank");
    }
    assertEquals(32, store.count("SELECT count(*) FROM allocations a JOIN tasks t ON t.id = a.task_id"
        + " WHERE t.group_id = $1 AND a.active", id));
  }

  @Test
  void duplicateInternalAddressesSplitTheGroupOntoPublicAddressesAndGloo() throws Exception {
    GroupStore groups = new GroupStore(store.pool, new BatchBindStore(store.pool, SchedulerConfig.defaults(),
        store.binds));
    store.node("vpc-a", 2, ip("10.9.0.5/24"));
    store.node("vpc-b", 2, ip("10.9.0.5/24"));
    store.query("UPDATE nodes SET public_ips = jsonb_build_array($2::text) WHERE id = $1", "vpc-a", "203.0.113.10");
    GroupStore.Group group = await(groups.create("default", workers("split", 2, 2)));
    List<BindStore.Request> requests = List.of(
        new BindStore.Request(group.members().get(0).id(), "vpc-a", List.of(0, 1), null),
        new BindStore.Request(group.members().get(1).id(), "vpc-b", List.of(0, 1), null));
    GroupStore.Bound bound = await(groups.bind(group.group(), requests, null));
    assertTrue(bound.bound(), bound.message());
    assertEquals("203.0.113.10", bound.masterAddr(), "across VPCs: rank 0's public address");
    assertEquals("gloo", bound.backend());
    assertEquals(2, bound.domains());
    Row row = store.query("SELECT distributed FROM tasks WHERE id = $1", group.members().get(1).id()).iterator().next();
    assertEquals("gloo", ((JsonObject) row.getValue("distributed")).getString("backend"));
  }

  @Test
  void aGroupIsAPreemptionVictimOnlyWholeAndOnlyWhenEveryMemberMayBeOne() throws Exception {
    GroupStore groups = new GroupStore(store.pool, new BatchBindStore(store.pool, SchedulerConfig.defaults(),
        store.binds));
    for (String node : List.of("pre-1", "pre-2", "pre-3", "pre-4")) {
      store.node(node, 2, ip("10.2.0." + node.charAt(4) + "/24"));
    }
    GroupStore.Group cheap = boundJobGroup(groups, "cheap", true, true, "pre-1", "pre-2");
    GroupStore.Group mixed = boundJobGroup(groups, "mixed", true, false, "pre-3", "pre-4");
    PreemptionStore preemptions = new PreemptionStore(store.pool);
    Map<String, List<io.heteroflow.controlplane.scheduler.framework.Occupant>> occupants =
        await(preemptions.occupants(90));
    assertTrue(occupants.get("pre-1").get(0).preemptible(), "every member of 'cheap' may be a victim");
    assertEquals(cheap.group().id(), occupants.get("pre-1").get(0).groupId());
    assertFalse(occupants.get("pre-3").get(0).preemptible(),
        "a preemptible member of a group with a member that is not is no victim");
    TaskRecord urgent = store.task(2);
    UUID rank0 = cheap.members().get(0).id();
    UUID rank1 = cheap.members().get(1).id();
    PreemptionStore.Preempted part = await(preemptions.preemptOn(new PreemptionStore.Plan(urgent.id(), 90, "pre-1",
        List.of(rank0), "part of a group"), 60, null));
    assertEquals(PreemptionStore.Outcome.STALE, part.outcome(), "PostgreSQL refuses part of a group");
    assertEquals(TaskStatus.SCHEDULED, store.reload(rank0).status());
    PreemptionStore.Preempted whole = await(preemptions.preemptOn(new PreemptionStore.Plan(urgent.id(), 90, "pre-1",
        List.of(rank0, rank1), "the whole group"), 60, null));
    assertEquals(PreemptionStore.Outcome.PREEMPTED, whole.outcome());
    assertEquals(Map.of(rank0, "pre-1", rank1, "pre-2"), whole.victimNodes(), "each victim's agent is told");
    assertEquals(TaskStatus.PREEMPTING, store.reload(rank1).status());
    assertEquals(PreemptionStore.Outcome.STALE, await(preemptions.preemptOn(new PreemptionStore.Plan(urgent.id(), 90,
        "pre-3", mixed.members().stream().map(TaskRecord::id).toList(), "not every member may go"), 60, null)).outcome());
  }

  private static GroupStore.Group boundJobGroup(GroupStore groups, String name, boolean firstPreemptible,
                                                boolean secondPreemptible, String... nodes) throws Exception {
    List<TaskSpec> members = new ArrayList<>();
    for (boolean preemptible : List.of(firstPreemptible, secondPreemptible)) {
      members.add(new TaskSpec(name, "job", null, List.of("true"), Map.of(), 10, preemptible, 2, 0, null, List.of(),
          0, 0, 60, 10, null, Map.of(), Map.of()));
    }
    GroupStore.Group group = await(groups.create("default", new GroupSpec(name, "job", null, null, 0, members)));
    List<BindStore.Request> requests = new ArrayList<>();
    for (int rank = 0; rank < nodes.length; rank++) {
      requests.add(new BindStore.Request(group.members().get(rank).id(), nodes[rank], List.of(0, 1), null));
    }
    assertTrue(await(groups.bind(group.group(), requests, null)).bound());
    return group;
  }

  /** The task runs and succeeds: its cards are released. */
  private static void end(TaskRecord task) throws Exception {
    assertTrue(await(store.tasks.transition(task.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)));
    assertTrue(await(store.tasks.transition(task.id(), TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStore.Details.NONE)));
  }

  private static GroupStore.Group group(GroupStore groups, UUID id) throws Exception {
    return await(groups.get(id)).orElseThrow();
  }
}
