package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.NormalizeScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.PostFilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.PreFilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ReservePlugin;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The extension points beyond Filter and Score, through the real pipeline and registry: PreFilter and its
 * CycleState reaching the later points of the same decision only, PostFilter asked exactly when no node passes,
 * Reserve undone when a later step fails, NormalizeScore seeing every candidate.
 */
class ExtensionPointsTest {
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);
  private static final CycleState.Key<UUID> DECIDING = CycleState.key("test.deciding");
  private static final List<NodeInfo> NODES = List.of(node("a").busyCards(0, 1, 2, 3).build(), node("b").build(),
      node("off").offline().build());

  /** Remembers what each point saw; refuses tasks labelled deny, nominates the first refused node. */
  static final class Recorder implements PreFilterPlugin, PostFilterPlugin, ReservePlugin {
    final List<String> calls = new ArrayList<>();
    /** This instance's own key: keys are compared by identity, so two recorders never share it. */
    private final CycleState.Key<Boolean> prefiltered = CycleState.key("test.prefiltered");
    Map<String, Status> statuses;
    boolean refuseReserve;

    @Override
    public String name() {
      return "recorder";
    }

    @Override
    public Status preFilter(TaskRequest task, Snapshot snapshot, CycleState state) {
      calls.add(state.read(prefiltered) == null ? "prefilter" : "prefilter on a used state");
      state.write(prefiltered, true);
      state.write(DECIDING, task.id());
      return "deny".equals(task.label("test")) ? Status.reject(name(), ReasonCode.QuotaExceeded, "denied by the test")
          : Status.ok();
    }

    @Override
    public Result postFilter(TaskRequest task, Snapshot snapshot, Refusals refusals, CycleState state) {
      calls.add("postfilter " + task.id().equals(state.read(DECIDING)));
      statuses = refusals.byNode();
      return Result.nominate(statuses.keySet().iterator().next(), "would preempt there");
    }

    @Override
    public Status reserve(TaskRequest task, NodeInfo node, CycleState state) {
      calls.add("reserve " + node.id() + " " + task.id().equals(state.read(DECIDING)));
      return refuseReserve ? Status.reject(name(), ReasonCode.PortsExhausted, "without a test port") : Status.ok();
    }

    @Override
    public void unreserve(TaskRequest task, NodeInfo node, CycleState state) {
      calls.add("unreserve " + node.id());
    }
  }

  private static PluginSet withRecorder(Recorder recorder) {
    return BuiltInPlugins.registry(Fixtures.CONFIG)
        .register(PluginDefinition.of("recorder", () -> recorder), new PluginConfig("recorder", true, 0, Map.of()))
        .build(Map.of());
  }

  @Test
  void postFilterIsAskedOnlyWhenNoNodePassesAndMayNominate() {
    Recorder recorder = new Recorder();
    PluginSet plugins = withRecorder(recorder);
    Decision placed = PIPELINE.decide(task().gpus(4).build(), new Snapshot(NODES), plugins);
    assertEquals("b", placed.nodeId());
    assertFalse(recorder.calls.stream().anyMatch(call -> call.startsWith("postfilter")), recorder.calls.toString());

    recorder.calls.clear();
    Decision refused = PIPELINE.decide(task().gpus(9).build(), new Snapshot(NODES), plugins);
    assertFalse(refused.isPlaced());
    assertEquals(List.of("prefilter", "postfilter true"), recorder.calls, "once, with this decision's state");
    assertEquals("0/3 nodes are available: 1 offline, 2 fewer than 9 free cards.", refused.message(),
        "the reason is the pipeline's, unchanged by the hook");
    assertEquals(List.of("a", "b", "off"), List.copyOf(recorder.statuses.keySet()), "every node, in snapshot order");
    assertEquals("offline", recorder.statuses.get("off").reason());
    assertEquals("resource-filter", recorder.statuses.get("a").plugin());
    assertEquals("a", refused.nominatedNodeId());
    assertNull(PIPELINE.decide(task().gpus(9).build(), new Snapshot(NODES), BuiltInPlugins.registry(Fixtures.CONFIG)
        .build(Map.of())).nominatedNodeId(), "no PostFilter plugin, no nomination");
  }

  @Test
  void aPostFilterAloneKeepsTheMemoAndIsAskedOnItsRefusalsToo() {
    List<Map<String, Status>> seen = new ArrayList<>();
    PostFilterPlugin nominator = new PostFilterPlugin() {
      @Override
      public String name() {
        return "nominator";
      }

      @Override
      public Result postFilter(TaskRequest task, Snapshot snapshot, Refusals refusals, CycleState state) {
        seen.add(refusals.byNode());
        return Result.none();
      }
    };
    PluginSet plugins = BuiltInPlugins.registry(Fixtures.CONFIG).register(PluginDefinition.of("nominator",
        () -> nominator), new PluginConfig("nominator", true, 0, Map.of())).build(Map.of());
    assertTrue(plugins.memoizable(task().gpus(8).build()), "a PostFilter sees only refusals: the memo still answers");
    Snapshot snapshot = new Snapshot(NODES);
    assertEquals("b", PIPELINE.decide(task().gpus(8).build(), snapshot, plugins).nodeId());
    Decision refused = PIPELINE.decide(task().gpus(9).build(), snapshot, plugins);
    assertNull(refused.nominatedNodeId(), "Result.none() nominates nothing");
    assertEquals(1, seen.size());
    assertEquals("fewer than 9 free cards", seen.get(0).get("b").reason());
  }

  @Test
  void aPreFilterRefusalRefusesEveryNodeAndStillAsksPostFilter() {
    Recorder recorder = new Recorder();
    Decision refused = PIPELINE.decide(task().label("test", "deny").build(), new Snapshot(NODES), withRecorder(recorder));
    assertEquals(ReasonCode.QuotaExceeded, refused.code());
    assertEquals("0/3 nodes are available: 3 denied by the test.", refused.message());
    assertEquals(List.of("prefilter", "postfilter true"), recorder.calls);
  }

  @Test
  void aRefusedReserveUndoesTheReservationsBeforeIt() {
    Recorder first = new Recorder();
    Recorder second = new Recorder();
    second.refuseReserve = true;
    PluginSet plugins = BuiltInPlugins.registry(Fixtures.CONFIG)
        .register(PluginDefinition.of("first", () -> first), new PluginConfig("first", true, 0, Map.of()))
        .register(PluginDefinition.of("second", () -> second), new PluginConfig("second", true, 0, Map.of()))
        .build(Map.of());
    Decision refused = PIPELINE.decide(task().gpus(4).build(), new Snapshot(NODES), plugins);
    assertEquals(ReasonCode.PortsExhausted, refused.code());
    assertEquals("node b without a test port", refused.message());
    assertEquals(List.of("prefilter", "reserve b true", "unreserve b"), first.calls);
    assertEquals(List.of("prefilter", "reserve b true"), second.calls, "the refusing plugin reserved nothing");

    Recorder alone = new Recorder();
    Decision placed = PIPELINE.decide(task().gpus(4).build(), new Snapshot(NODES), withRecorder(alone));
    assertEquals("b", placed.nodeId());
    assertEquals(List.of("prefilter", "reserve b true"), alone.calls, "kept when the bind succeeds");
  }

  /** Scores every node 0, then normalizes so that the node named "a" gets 100 (against spread's preference). */
  static final class PreferA implements NormalizeScorePlugin {
    int candidatesSeen = -1;

    @Override
    public String name() {
      return "prefer-a";
    }

    @Override
    public double score(TaskRequest task, NodeInfo node, CycleState state) {
      return 0;
    }

    @Override
    public void normalizeScores(TaskRequest task, List<NodeInfo> feasible, double[] scores, CycleState state) {
      candidatesSeen = feasible.size();
      for (int i = 0; i < scores.length; i++) {
        scores[i] = feasible.get(i).id().equals("a") ? 1000 : 0;
      }
    }
  }

  @Test
  void normalizeScoreRescalesAfterEveryCandidateIsScoredAndIsClamped() {
    PreferA preferA = new PreferA();
    PluginRegistry registry = BuiltInPlugins.registry(Fixtures.CONFIG)
        .register(PluginDefinition.of("prefer-a", () -> preferA), new PluginConfig("prefer-a", true, 5, Map.of()));
    PluginSet plugins = registry.build(Map.of());
    assertFalse(plugins.memoizable(), "a normalized score depends on the other candidates");
    Decision placed = PIPELINE.decide(task().gpus(2).build(), new Snapshot(NODES), plugins);
    assertEquals("a", placed.nodeId(), "5 × 100 outweighs spread's preference for the idle node");
    assertEquals(2, preferA.candidatesSeen);
    double spreadOnA = new io.heteroflow.controlplane.scheduler.plugins.SpreadScore().score(task().build(), NODES.get(0),
        new CycleState());
    // nvlink, topology and rdma: neutral on nodes without their data; replica-spread: 100 (weight 2) for a non-replica
    double others = 50 + 50 + 50 + 2 * 100;
    assertEquals(5 * 100 + spreadOnA + others, placed.score(), 1e-9, "1000 clamped to 100");
  }

  @Test
  void eachDecisionGetsAFreshCycleState() {
    Recorder recorder = new Recorder();
    PluginSet plugins = withRecorder(recorder);
    recorder.refuseReserve = true;
    PIPELINE.decide(task().gpus(1).build(), new Snapshot(NODES), plugins);
    PIPELINE.decide(task().gpus(1).build(), new Snapshot(NODES), plugins);
    assertEquals(List.of("prefilter", "reserve b true", "prefilter", "reserve b true"), recorder.calls,
        "each reserve saw the id its own decision's PreFilter wrote");
    assertTrue(new CycleState().isEmpty());
  }
}
