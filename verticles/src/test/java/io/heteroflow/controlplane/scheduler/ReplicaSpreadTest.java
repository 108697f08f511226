package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.PluginState;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.scheduler.plugins.ReplicaSpreadScore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** replica-spread: an inference service's replicas on different nodes first, then different racks. */
class ReplicaSpreadTest {
  private static final PluginRegistry REGISTRY = BuiltInPlugins.registry(Fixtures.CONFIG);
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);
  private static final PluginSet DEFAULTS = REGISTRY.build(Map.of());
  private static final PluginSet WITHOUT = REGISTRY.build(Map.of(ReplicaSpreadScore.NAME,
      new PluginConfig(ReplicaSpreadScore.NAME, false, 0, Map.of())));
  private static final String SERVICE = "7d1c1a52-55f4-4c1e-9a57-3f0c1f1c0001";
  private static final String OTHER = "7d1c1a52-55f4-4c1e-9a57-3f0c1f1c0002";

  /**
   * Two nodes in rack a, one in rack b; a1 is by far the least loaded, so spread alone puts three one-card tasks
   * there (a1 with three of its eight cards in use is still less utilised than a2 at 50 % CPU).
   */
  private static List<NodeInfo> fleet() {
    return List.of(node("a1").cpu(5).location("r", "z", "a").build(),
        node("a2").cpu(50).location("r", "z", "a").build(),
        node("b1").cpu(70).location("r", "z", "b").build());
  }

  /** Decides and stages each task in turn, as one scheduling round does: the nodes chosen. */
  private static List<String> round(List<NodeInfo> nodes, PluginSet plugins, TaskRequest... tasks) {
    Snapshot snapshot = new Snapshot(nodes);
    List<String> chosen = new ArrayList<>();
    for (TaskRequest task : tasks) {
      Decision decision = PIPELINE.decide(task, snapshot, plugins);
      assertTrue(decision.isPlaced(), decision.toString());
      snapshot.assume(task, decision);
      chosen.add(decision.nodeId());
    }
    return chosen;
  }

  private static TaskRequest replica() {
    return task().replicaOf(SERVICE).gpus(1).build();
  }

  static Stream<Arguments> rounds() {
    return Stream.of(
        Arguments.of("three replicas on three nodes, the second in the other rack", fleet(),
            List.of(replica(), replica(), replica()), List.of("a1", "b1", "a2")),
        // 4th: b1 (n=1, o=0) scores 50 against a1's 40 (n=1, o=1), but spread's 21.7 points for idle a1 outweigh
        // the 2 × 10 difference
        Arguments.of("a fourth doubles up (a preference, not a filter)", fleet(),
            List.of(replica(), replica(), replica(), replica()), List.of("a1", "b1", "a2", "a1")),
        Arguments.of("cpu-only replicas spread too (counted per node, not per card)", fleet(),
            List.of(task().replicaOf(SERVICE).gpus(0).cpuCores(1).build(),
                task().replicaOf(SERVICE).gpus(0).cpuCores(1).build()), List.of("a1", "b1")),
        Arguments.of("replicas already running count: a1 and b1 hold one each", List.of(
                node("a1").cpu(5).location("r", "z", "a").replicas(SERVICE, 1).build(),
                node("a2").cpu(50).location("r", "z", "a").build(),
                node("b1").cpu(70).location("r", "z", "b").replicas(SERVICE, 1).build()),
            List.of(replica()), List.of("a2")),
        Arguments.of("another service's replicas do not count", List.of(
                node("a1").cpu(5).location("r", "z", "a").replicas(OTHER, 3).build(),
                node("b1").cpu(20).location("r", "z", "b").build()),
            List.of(replica()), List.of("a1")),
        Arguments.of("nodes without a rack are racks of their own", List.of(
                node("x").cpu(5).build(), node("y").cpu(10).build(), node("z").cpu(20).build()),
            List.of(replica(), replica(), replica()), List.of("x", "y", "z")),
        Arguments.of("ordinary tasks are unchanged: all on the least loaded", fleet(),
            List.of(task().gpus(1).build(), task().gpus(1).build(), task().gpus(1).build()),
            List.of("a1", "a1", "a1")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rounds")
  void placesARound(String name, List<NodeInfo> nodes, List<TaskRequest> tasks, List<String> expected) {
    assertEquals(expected, round(nodes, DEFAULTS, tasks.toArray(TaskRequest[]::new)), name);
  }

  @Test
  void withoutThePluginReplicasStackOnTheLeastLoadedNode() {
    assertEquals(List.of("a1", "a1", "a1"), round(fleet(), WITHOUT, replica(), replica(), replica()));
  }

  @Test
  void anOrdinaryTaskPlacesTheSameWithAndWithoutIt() {
    List<NodeInfo> nodes = List.of(node("a").busyCards(0, 1, 2).cpu(30).location("r", "z", "a").build(),
        node("b").cpu(50).location("r", "z", "b").replicas(SERVICE, 2).build(), node("c").cpu(40).build());
    for (TaskRequest task : List.of(task().gpus(4).build(), task().gpus(1).build(), task().shard(10_000).build())) {
      Decision with = PIPELINE.decide(task, new Snapshot(nodes), DEFAULTS);
      Decision without = PIPELINE.decide(task, new Snapshot(nodes), WITHOUT);
      assertEquals(without.nodeId(), with.nodeId());
      assertEquals(without.gpuIndices(), with.gpuIndices());
    }
  }

  @Test
  void theScoringRule() {
    ReplicaSpreadScore plugin = new ReplicaSpreadScore();
    Snapshot snapshot = new Snapshot(List.of(node("a1").location("r", "z", "a").replicas(SERVICE, 1).build(),
        node("a2").location("r", "z", "a").build(), node("a3").location("r", "z", "a").replicas(SERVICE, 2).build(),
        node("b1").location("r", "z", "b").build(), node("c1").location("r", "z", "c").replicas(SERVICE, 1).build(),
        node("n").build()));
    TaskRequest replica = replica();
    CycleState state = new CycleState();
    assertTrue(plugin.preFilter(replica, snapshot, state).isOk());
    Map<String, Double> expected = Map.of("a1", 80.0 / 2, "a2", 80.0, "a3", 80.0 / 3, "b1", 100.0,
        "c1", 100.0 / 2, "n", 100.0);
    expected.forEach((id, score) -> assertEquals(score, plugin.score(replica, snapshot.node(id), state), 1e-9, id));
    TaskRequest ordinary = task().build();
    snapshot.nodeViews().forEach(node -> assertEquals(100.0, plugin.score(ordinary, node, new CycleState())));
  }

  @Test
  void onByDefaultAndTheMemoStillAnswersForOrdinaryTasks() {
    PluginState state = DEFAULTS.state(ReplicaSpreadScore.NAME);
    assertTrue(state.enabled());
    assertEquals(2, state.weight());
    assertTrue(DEFAULTS.memoizable(task().gpus(2).build()), "no replica: decided from the memo");
    assertFalse(DEFAULTS.memoizable(replica()), "a replica is judged with the counts as they are");
  }
}
