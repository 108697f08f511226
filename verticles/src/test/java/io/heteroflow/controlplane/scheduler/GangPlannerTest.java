package io.heteroflow.controlplane.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner.GangDecision;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.scheduler.gang.GroupPath;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The group decision on fixtures (SPEC §9): all or nothing, the topology preference, strict gpu_type on every path. */
class GangPlannerTest {
  private static final PluginRegistry REGISTRY = BuiltInPlugins.registry(Fixtures.CONFIG);
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);
  private static final PluginSet DEFAULTS = REGISTRY.build(Map.of());
  private static final GangPlanner PLANNER = new GangPlanner(PIPELINE);

  private static GangRequest group(String gpuType, String parallelism, List<TaskRequest> members) {
    return new GangRequest(UUID.randomUUID(), "team-a", 50, Instant.now(), gpuType, parallelism, members);
  }

  private static List<TaskRequest> workers(int count, int cards) {
    List<TaskRequest> members = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      members.add(Fixtures.task().gpus(cards).build());
    }
    return members;
  }

  private static Set<String> nodesOf(GangDecision decision) {
    return decision.placements().stream().map(each -> each.decision().nodeId()).collect(Collectors.toSet());
  }

  @Test
  void theGroupGoesToTheRackThatHoldsItWholeTheTightestOne() {
    List<NodeInfo> nodes = new ArrayList<>();
    for (int i = 0; i < 6; i++) { // rack big: 6 free nodes, rack small: 2, rack mid: 4
      nodes.add(Fixtures.node("big-" + i).location("r", "z1", "big").build());
    }
    nodes.add(Fixtures.node("small-0").location("r", "z1", "small").build());
    nodes.add(Fixtures.node("small-1").location("r", "z1", "small").build());
    for (int i = 0; i < 4; i++) {
      nodes.add(Fixtures.node("mid-" + i).location("r", "z2", "mid").build());
    }
    GangDecision four = PLANNER.decide(group(null, null, workers(4, 8)), new Snapshot(nodes), DEFAULTS);
    assertTrue(four.placed(), four.message());
    assertEquals(Set.of("mid-0", "mid-1", "mid-2", "mid-3"), nodesOf(four), "the rack that fits four exactly");
    GangDecision two = PLANNER.decide(group(null, null, workers(2, 8)), new Snapshot(nodes), DEFAULTS);
    assertEquals(Set.of("small-0", "small-1"), nodesOf(two), "the smallest rack that holds it: big racks stay whole");
  }

  @Test
  void withoutARackThatHoldsItTheGroupStaysInOneZoneBeforeCrossingZones() {
    List<NodeInfo> nodes = List.of(
        Fixtures.node("a-0").location("r", "z1", "a").build(),
        Fixtures.node("b-0").location("r", "z1", "b").build(),
        Fixtures.node("c-0").location("r", "z2", "c").build());
    GangDecision decision = PLANNER.decide(group(null, null, workers(2, 8)), new Snapshot(nodes), DEFAULTS);
    assertEquals(Set.of("a-0", "b-0"), nodesOf(decision), "same zone 2 beats another zone 0");
  }

  @Test
  void smallMembersShareNodesSoTheGroupUsesFewNodes() {
    List<NodeInfo> nodes = List.of(Fixtures.node("n-0").build(), Fixtures.node("n-1").build(),
        Fixtures.node("n-2").build());
    GangDecision decision = PLANNER.decide(group(null, null, workers(4, 2)), new Snapshot(nodes), DEFAULTS);
    assertEquals(1, nodesOf(decision).size(), "four 2-card members fill one 8-card node: " + decision.placements());
  }

  @Test
  void aGroupThatCannotBeCompletedHoldsNothingAndCountsWhy() {
    List<NodeInfo> nodes = List.of(Fixtures.node("free-0").build(), Fixtures.node("free-1").build(),
        Fixtures.node("free-2").build(), Fixtures.node("down").offline().build(),
        Fixtures.node("half").busyCards(0, 1, 2, 3).build());
    Snapshot snapshot = new Snapshot(nodes);
    GangDecision decision = PLANNER.decide(group(null, null, workers(4, 8)), snapshot, DEFAULTS);
    assertFalse(decision.placed());
    assertEquals(ReasonCode.GangIncomplete, decision.code());
    assertTrue(decision.message().contains("needs 4 members with 8 free nvidia cards each"), decision.message());
    assertTrue(decision.message().contains("3 of 5 nodes qualify, room for 3"), decision.message());
    assertTrue(decision.message().contains("1 offline"), decision.message());
    assertTrue(decision.placements().isEmpty());
    for (NodeInfo node : snapshot.nodeViews()) {
      NodeInfo before = nodes.stream().filter(n -> n.id().equals(node.id())).findFirst().orElseThrow();
      assertEquals(before.gpuUsed(), node.gpuUsed(), "a refused group staged nothing on " + node.id());
    }
  }

  /** One group of each path, all of gpu_type nvidia, on a fleet whose free nvidia nodes cannot hold it. */
  static Stream<Arguments> paths() {
    TaskRequest eight = Fixtures.task().gpus(8).build();
    return Stream.of(
        Arguments.of(GroupPath.TENSOR_PARALLEL, "tensor", workers(3, 8)),
        Arguments.of(GroupPath.DATA_PARALLEL, null, workers(3, 8)),
        Arguments.of(GroupPath.GREEDY_BY_CARDS, null, List.of(eight, Fixtures.task().gpus(8).build(),
            Fixtures.task().gpus(4).build())),
        Arguments.of(GroupPath.CO_SCHEDULING, null, List.of(eight, Fixtures.task().gpus(8).cpuCores(4).build(),
            Fixtures.task().gpus(8).cpuCores(2).build())),
        Arguments.of(GroupPath.PIPELINE_PARALLEL, "pipeline", workers(3, 8)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("paths")
  void everyPathFiltersStrictlyByTheGroupsGpuTypeAndNeverFallsBack(GroupPath path, String hint,
                                                                   List<TaskRequest> members) {
    List<NodeInfo> nodes = new ArrayList<>();
    nodes.add(Fixtures.node("nv-0").build());
    nodes.add(Fixtures.node("nv-1").build());
    for (int i = 0; i < 4; i++) {
      nodes.add(Fixtures.node("npu-" + i).vendor("ascend").build());
    }
    GangRequest nvidia = group("nvidia", hint, members);
    assertEquals(path, GroupPath.of(hint, members));
    GangDecision decision = PLANNER.decide(nvidia, new Snapshot(nodes), DEFAULTS);
    assertFalse(decision.placed(), "four free ascend nodes are never a fallback: " + decision.placements());
    assertEquals(path, decision.path());
    assertEquals(ReasonCode.GangIncomplete, decision.code());
    assertTrue(decision.message().contains("nvidia"), decision.message());
    assertTrue(decision.message().contains("not nvidia"), "the refusal counts the other vendor: " + decision.message());
    GangDecision absent = PLANNER.decide(group("metax", hint, members), new Snapshot(nodes), DEFAULTS);
    assertEquals(ReasonCode.GPUTypeUnavailable, absent.code(), absent.message());
    nodes.add(Fixtures.node("nv-2").build());
    GangDecision placed = PLANNER.decide(nvidia, new Snapshot(nodes), DEFAULTS);
    assertTrue(placed.placed(), placed.message());
    assertTrue(nodesOf(placed).stream().allMatch(node -> node.startsWith("nv-")), "" + nodesOf(placed));
  }

  @Test
  void aGroupNamingNoGpuTypeNeverMixesVendors() {
    List<NodeInfo> nodes = List.of(Fixtures.node("nv-0").build(), Fixtures.node("nv-1").build(),
        Fixtures.node("npu-0").vendor("ascend").build(), Fixtures.node("npu-1").vendor("ascend").build(),
        Fixtures.node("npu-2").vendor("ascend").build());
    GangDecision three = PLANNER.decide(group(null, null, workers(3, 8)), new Snapshot(nodes), DEFAULTS);
    assertEquals(Set.of("npu-0", "npu-1", "npu-2"), nodesOf(three));
    GangDecision four = PLANNER.decide(group(null, null, workers(4, 8)), new Snapshot(nodes), DEFAULTS);
    assertFalse(four.placed(), "five free nodes, but no vendor has four: " + four.placements());
  }

  @Test
  void pipelineStagesSitNextToTheStageBeforeThemAndDataRanksFollowTopology() {
    List<NodeInfo> nodes = List.of(
        Fixtures.node("x-0").location("r", "z1", "x").build(), Fixtures.node("y-0").location("r", "z2", "y").build(),
        Fixtures.node("x-1").location("r", "z1", "x").build(), Fixtures.node("y-1").location("r", "z2", "y").build());
    GangDecision pipeline = PLANNER.decide(group(null, "pipeline", workers(4, 8)), new Snapshot(nodes), DEFAULTS);
    List<String> stages = pipeline.placements().stream().map(each -> each.decision().nodeId()).toList();
    assertEquals(stages.get(0).charAt(0), stages.get(1).charAt(0), "stages 0 and 1 share a rack: " + stages);
    assertEquals(stages.get(2).charAt(0), stages.get(3).charAt(0), "stages 2 and 3 share a rack: " + stages);
    GangDecision data = PLANNER.decide(group(null, null, workers(4, 8)), new Snapshot(nodes), DEFAULTS);
    List<String> ranks = data.placements().stream().map(each -> each.decision().nodeId()).toList();
    assertEquals(List.of("x-0", "x-1", "y-0", "y-1"), ranks, "ranks in topology order, rank 0 first");
  }

  @Test
  void theTensorPathKeepsEachMembersCardsInOneNvlinkDomain() {
    // two NVLink domains of four cards on each node: a 4-card member must take one whole domain
    String topology = "nvlink=0-1-2-3,4-5-6-7;numa=0,0,0,0,1,1,1,1";
    List<NodeInfo> nodes = List.of(Fixtures.node("t-0").topology(topology).busyCards(0).build(),
        Fixtures.node("t-1").topology(topology).build());
    GangDecision decision = PLANNER.decide(group(null, "tensor", workers(3, 4)), new Snapshot(nodes), DEFAULTS);
    assertTrue(decision.placed(), decision.message());
    for (GangPlanner.Placement each : decision.placements()) {
      List<Integer> cards = each.decision().gpuIndices();
      boolean low = cards.stream().allMatch(card -> card < 4);
      boolean high = cards.stream().allMatch(card -> card >= 4);
      assertTrue(low || high, "one NVLink domain: " + cards);
    }
  }
}
