package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.preemption.PreemptionRules;
import io.heteroflow.controlplane.scheduler.preemption.VictimPlanner;
import io.heteroflow.protocol.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The minimal victim set of SPEC §6, case by case. Every expected victim list and node was worked out by hand
 * from the rules (priority ascending → newest first → latest checkpoint → id; fewest victims → smaller priority
 * sum → node id; not enough → nobody), not copied from the planner's output.
 */
class VictimPlannerTest {
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  /** An occupant of a fleet fixture: named, so the table can say who goes. */
  record Named(String name, String node, Occupant occupant) {
  }

  private static final class Fleet {
    private final Map<String, Fixtures.NodeBuilder> builders = new LinkedHashMap<>();
    private final List<Named> occupants = new ArrayList<>();

    Fleet node(String id, int cards) {
      builders.put(id, Fixtures.node(id).cards(cards, "A100"));
      return this;
    }

    /** A one-card (or n-card) job, preemptible, running, started an hour ago. */
    Fleet job(String name, String nodeId, int priority, int createdMinutesAgo, int... cards) {
      return add(name, nodeId, occupant(name, "team-b", "job", priority, true, TaskStatus.RUNNING, createdMinutesAgo,
          60 * 60, null, cards, null, 0));
    }

    Fleet add(String name, String nodeId, Occupant occupant) {
      occupants.add(new Named(name, nodeId, occupant));
      for (int card : occupant.gpuIndices()) {
        builders.get(nodeId).busyCards(card);
      }
      if (occupant.holdsShard()) {
        builders.get(nodeId).shard(occupant.shardCard(), occupant.tenant(), occupant.shardMemoryMb());
      }
      return this;
    }

    Map<NodeInfo, List<Occupant>> nodes() {
      Map<NodeInfo, List<Occupant>> nodes = new LinkedHashMap<>();
      builders.forEach((id, builder) -> nodes.put(builder.build(), occupants.stream()
          .filter(each -> each.node().equals(id)).map(Named::occupant).toList()));
      return nodes;
    }

    String nameOf(UUID id) {
      return occupants.stream().filter(each -> each.occupant().taskId().equals(id)).findFirst().orElseThrow().name();
    }
  }

  private static Occupant occupant(String name, String tenant, String type, int priority, boolean preemptible,
                                   TaskStatus status, int createdMinutesAgo, Integer runningSeconds,
                                   Integer checkpointSecondsAgo, int[] cards, Integer shardCard, long shardMb) {
    List<Integer> indices = new ArrayList<>();
    for (int card : cards) {
      indices.add(card);
    }
    return new Occupant(UUID.nameUUIDFromBytes(name.getBytes()), tenant, type, priority, preemptible, status,
        NOW.minusSeconds(60L * createdMinutesAgo), runningSeconds == null ? null : NOW.minusSeconds(runningSeconds),
        checkpointSecondsAgo == null ? null : NOW.minusSeconds(checkpointSecondsAgo), indices, shardCard, shardMb, 1,
        1024);
  }

  /** The preemptor's filters on a node: {@code cards} whole cards free. */
  private static Predicate<NodeInfo> wholeCards(int cards) {
    return node -> node.freeCardCount(List.of()) >= cards;
  }

  /** The preemptor's filters on a node: a shard of {@code mb} for {@code tenant} on a card it may share. */
  private static Predicate<NodeInfo> shardFor(String tenant, long mb, TenantBoundary boundary) {
    return node -> node.cards().stream().anyMatch(card -> {
      CardUse use = node.use(card.index());
      return use.wholeTasks() == 0 && boundary.mayJoin(tenant, use.tenants())
          && card.memoryTotalMb() - use.shardMemoryMb() >= mb;
    });
  }

  record Case(String why, Fleet fleet, int priority, Predicate<NodeInfo> fits, PreemptionRules rules,
              String node, List<String> victims) {
    @Override
    public String toString() {
      return why;
    }
  }

  private static final PreemptionRules RUNNING = PreemptionRules.DEFAULTS;

  static Stream<Case> cases() {
    int[] c0 = {0};
    int[] c1 = {1};
    return Stream.of(
        new Case("lowest priorities go first, only as many as needed",
            new Fleet().node("n1", 4).job("p30", "n1", 30, 10, 0).job("p10", "n1", 10, 10, 1)
                .job("p20", "n1", 20, 10, 2).job("p40", "n1", 40, 10, 3),
            50, wholeCards(2), RUNNING, "n1", List.of("p10", "p20")),
        new Case("same priority: the newest goes first",
            new Fleet().node("n1", 3).job("old", "n1", 10, 90, 0).job("new", "n1", 10, 5, 1)
                .job("mid", "n1", 10, 30, 2),
            50, wholeCards(1), RUNNING, "n1", List.of("new")),
        new Case("same priority and age: the most recent checkpoint goes first (it loses the least work)",
            new Fleet().node("n1", 2)
                .add("stale", "n1", occupant("stale", "team-b", "job", 10, true, TaskStatus.RUNNING, 10, 3600, 1800,
                    c0, null, 0))
                .add("fresh", "n1", occupant("fresh", "team-b", "job", 10, true, TaskStatus.RUNNING, 10, 3600, 60,
                    c1, null, 0)),
            50, wholeCards(1), RUNNING, "n1", List.of("fresh")),
        new Case("all else equal: task id decides (nameUUID of 'a' < of 'b' is fixed)",
            new Fleet().node("n1", 2).job("a", "n1", 10, 10, 0).job("b", "n1", 10, 10, 1),
            50, wholeCards(1), RUNNING, "n1",
            List.of(UUID.nameUUIDFromBytes("a".getBytes()).compareTo(UUID.nameUUIDFromBytes("b".getBytes())) < 0
                ? "a" : "b")),
        new Case("stage running: a scheduled task is no victim, so the running one goes though it ranks later",
            new Fleet().node("n1", 2)
                .add("sched", "n1", occupant("sched", "team-b", "job", 5, true, TaskStatus.SCHEDULED, 1, null, null,
                    c0, null, 0))
                .job("run", "n1", 20, 10, 1),
            50, wholeCards(1), RUNNING, "n1", List.of("run")),
        new Case("stage scheduled: scheduled and running tasks are victims",
            new Fleet().node("n1", 2)
                .add("sched", "n1", occupant("sched", "team-b", "job", 5, true, TaskStatus.SCHEDULED, 1, null, null,
                    c0, null, 0))
                .job("run", "n1", 20, 10, 1),
            50, wholeCards(1), new PreemptionRules("scheduled", Duration.ZERO, Duration.ZERO), "n1", List.of("sched")),
        new Case("stage disabled: nobody",
            new Fleet().node("n1", 1).job("j", "n1", 5, 10, 0),
            50, wholeCards(1), new PreemptionRules("disabled", Duration.ZERO, Duration.ZERO), null, List.of()),
        new Case("exempt: training (even preemptible), inference, not preemptible, equal priority",
            new Fleet().node("n1", 5)
                .add("train", "n1", occupant("train", "team-b", "training", 1, true, TaskStatus.RUNNING, 10, 3600,
                    null, c0, null, 0))
                .add("infer", "n1", occupant("infer", "team-b", "inference", 1, true, TaskStatus.RUNNING, 10, 3600,
                    null, c1, null, 0))
                .add("kept", "n1", occupant("kept", "team-b", "job", 1, false, TaskStatus.RUNNING, 10, 3600, null,
                    new int[] {2}, null, 0))
                .job("equal", "n1", 50, 10, 3).job("lower", "n1", 49, 10, 4),
            50, wholeCards(2), RUNNING, null, List.of()),
        new Case("not enough even with every candidate: nobody",
            new Fleet().node("n1", 2).job("j1", "n1", 10, 10, 0).job("j2", "n1", 10, 10, 1),
            50, wholeCards(3), RUNNING, null, List.of()),
        new Case("across nodes: fewest victims wins over a lower priority sum",
            new Fleet().node("a", 2).job("a1", "a", 1, 10, 0).job("a2", "a", 1, 10, 1)
                .node("b", 2).job("b1", "b", 40, 10, 0, 1),
            50, wholeCards(2), RUNNING, "b", List.of("b1")),
        new Case("across nodes: same count, the smaller priority sum wins",
            new Fleet().node("a", 1).job("a1", "a", 30, 10, 0).node("b", 1).job("b1", "b", 20, 10, 0),
            50, wholeCards(1), RUNNING, "b", List.of("b1")),
        new Case("across nodes: same count and sum, the node id decides",
            new Fleet().node("z", 1).job("z1", "z", 20, 10, 0).node("m", 1).job("m1", "m", 20, 10, 0),
            50, wholeCards(1), RUNNING, "m", List.of("m1")),
        new Case("protected runtime: a task running less than min_runtime is no victim",
            new Fleet().node("n1", 2)
                .add("young", "n1", occupant("young", "team-b", "job", 5, true, TaskStatus.RUNNING, 2, 100, null, c0,
                    null, 0))
                .add("aged", "n1", occupant("aged", "team-b", "job", 20, true, TaskStatus.RUNNING, 20, 700, null, c1,
                    null, 0)),
            50, wholeCards(1), new PreemptionRules("running", Duration.ofSeconds(600), Duration.ZERO), "n1",
            List.of("aged")),
        new Case("tenant boundary: freeing a shard beside another tenant's shard does not make the card usable",
            new Fleet().node("x", 1)
                .add("bx", "x", occupant("bx", "team-b", "job", 10, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 40_000))
                .add("cx", "x", occupant("cx", "team-c", "job", 90, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 30_000))
                .node("y", 1)
                .add("by", "y", occupant("by", "team-b", "job", 30, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 70_000)),
            50, shardFor("team-a", 30_000, TenantBoundary.ISOLATED), RUNNING, "y", List.of("by")),
        new Case("shard memory: the prefix stops once the card has room",
            new Fleet().node("n1", 1)
                .add("s1", "n1", occupant("s1", "team-a", "job", 10, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 30_000))
                .add("s2", "n1", occupant("s2", "team-a", "job", 20, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 30_000))
                .add("s3", "n1", occupant("s3", "team-a", "job", 30, true, TaskStatus.RUNNING, 10, 3600, null,
                    new int[0], 0, 20_000)),
            50, shardFor("team-a", 50_000, TenantBoundary.ISOLATED), RUNNING, "n1", List.of("s1", "s2")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void theMinimalVictimSet(Case c) {
    var plan = VictimPlanner.plan(c.priority(), c.fleet().nodes(), c.fits(), c.rules(), NOW);
    if (c.node() == null) {
      assertTrue(plan.isEmpty(), "nobody is preempted: " + plan);
      return;
    }
    assertEquals(c.node(), plan.orElseThrow().node().id());
    assertEquals(c.victims(), plan.orElseThrow().victims().stream().map(v -> c.fleet().nameOf(v.taskId())).toList());
  }

  @Test
  void thePlannedNodeGivesBackWhatTheVictimsHeld() {
    Fleet fleet = new Fleet().node("n1", 4).job("big", "n1", 10, 10, 0, 1).job("small", "n1", 40, 10, 2);
    var plan = VictimPlanner.plan(50, fleet.nodes(), wholeCards(4), RUNNING, NOW).orElseThrow();
    assertEquals(List.of("big", "small"), plan.victims().stream().map(v -> fleet.nameOf(v.taskId())).toList());
    NodeInfo freed = plan.freed();
    assertEquals(0, freed.gpuUsed(), "the node's count went down by the victims' three cards");
    assertEquals(4, freed.freeCardCount(List.of()));
    assertEquals(Set.of(), new HashSet<>(freed.cardUse().keySet()));
  }

  @Test
  void whoMayPreempt() {
    PreemptionRules waits = new PreemptionRules("running", Duration.ZERO, Duration.ofSeconds(300));
    Instant queued = NOW.minusSeconds(200);
    assertFalse(RUNNING.mayPreempt("training", ReasonCode.InsufficientResources, queued, NOW), "training never");
    assertTrue(RUNNING.mayPreempt("inference", ReasonCode.InsufficientResources, queued, NOW), "inference may");
    assertTrue(RUNNING.mayPreempt("job", ReasonCode.NoSchedulableNodes, queued, NOW));
    for (ReasonCode incurable : List.of(ReasonCode.GPUTypeUnavailable, ReasonCode.NoTenantEligibleGPU,
        ReasonCode.NVLinkDomainUnavailable)) {
      assertFalse(RUNNING.mayPreempt("job", incurable, queued, NOW), incurable + " no victim can cure");
    }
    assertFalse(waits.mayPreempt("job", ReasonCode.InsufficientResources, queued, NOW), "waited 200 of 300 s");
    assertTrue(waits.mayPreempt("job", ReasonCode.InsufficientResources, NOW.minusSeconds(300), NOW));
    assertFalse(new PreemptionRules("disabled", Duration.ZERO, Duration.ZERO)
        .mayPreempt("job", ReasonCode.InsufficientResources, queued, NOW));
  }
}
