package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Table-driven cases of the plain-Java pipeline: filters, reasons with counts, scoring, card picking. */
class SchedulingPipelineTest {
  private static final PluginRegistry REGISTRY = BuiltInPlugins.registry(Fixtures.CONFIG);
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);
  private static final PluginSet DEFAULTS = REGISTRY.build(Map.of());

  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of("places on the only fitting node",
            List.of(node("a").busyCards(0, 1, 2, 3, 4, 5, 6).build(), node("b").build()),
            task().gpus(4).build(), "b", null, null),
        Arguments.of("gpu_type filters other vendors",
            List.of(node("nv").build(), node("asc").vendor("ascend").build()),
            task().gpuType("ascend").build(), "asc", null, null),
        Arguments.of("gpu_type is case-insensitive",
            List.of(node("asc").vendor("ascend").build()),
            task().gpuType("ASCEND").build(), "asc", null, null),
        Arguments.of("reason counts every rejection",
            List.of(node("off").offline().build(), node("asc").vendor("ascend").build(),
                node("full").busyCards(0, 1, 2, 3, 4, 5).build()),
            task().gpuType("nvidia").gpus(4).build(), null, "InsufficientResources",
            "0/3 nodes are available: 1 offline, 1 not nvidia, 1 fewer than 4 free cards."),
        Arguments.of("no vendor anywhere",
            List.of(node("asc").vendor("ascend").build()),
            task().gpuType("nvidia").build(), null, "GPUTypeUnavailable",
            "0/1 nodes are available: 1 not nvidia."),
        Arguments.of("dedicated node is only for its owner",
            List.of(node("mine").dedicatedTo("team-b").build()),
            task().tenant("team-a").build(), null, "NoSchedulableNodes",
            "0/1 nodes are available: 1 dedicated to another tenant."),
        Arguments.of("owner uses its dedicated node",
            List.of(node("mine").dedicatedTo("team-b").build()),
            task().tenant("team-b").build(), "mine", null, null),
        Arguments.of("node_selector must match labels",
            List.of(node("plain").build(), node("fast").label("pool", "fast").build()),
            task().selector("pool", "fast").build(), "fast", null, null),
        Arguments.of("gpu_model restricts cards",
            List.of(node("v100").cards(8, "V100M16").build(), node("a100").build()),
            task().models("V100M16", "V100M32").build(), "v100", null, null),
        Arguments.of("a card at 95 % memory is not free",
            List.of(node("hot").cards(1, "A100").cardMemoryUsedPercent(0, 96).build()),
            task().build(), null, "InsufficientResources", "0/1 nodes are available: 1 fewer than 1 free cards."),
        Arguments.of("no node registered yet",
            List.of(), task().build(), null, "NoSchedulableNodes",
            "0/0 nodes are available: no node has registered yet."),
        Arguments.of("declared CPU counts against what is left",
            List.of(node("tight").cpuCores(16, 12).build()),
            task().cpuCores(8).build(), null, "InsufficientResources", "0/1 nodes are available: 1 short of CPU cores."),
        Arguments.of("spread prefers the emptier node",
            List.of(node("loaded").busyCards(0, 1, 2, 3).cpu(60).build(), node("idle").cpu(5).build()),
            task().build(), "idle", null, null),
        Arguments.of("a node at the CPU threshold takes nothing",
            List.of(node("hot").cpu(97).build()),
            task().build(), null, "LoadThresholdExceeded",
            "0/1 nodes are available: 1 over load thresholds (CPU at or above 90 %)."),
        Arguments.of("a hot node is passed over for a cool one",
            List.of(node("hot").cpu(90).build(), node("cool").busyCards(0, 1, 2, 3, 4, 5, 6).cpu(89).build()),
            task().build(), "cool", null, null),
        Arguments.of("a node at the memory threshold takes nothing, not even a task without cards",
            List.of(node("swapping").memoryUsedMb(480_000).build()),
            task().gpus(0).build(), null, "LoadThresholdExceeded",
            "0/1 nodes are available: 1 over load thresholds (memory at or above 90 %)."),
        Arguments.of("hot cards leave too few cool ones",
            List.of(node("warm").cards(2, "A100").cardTemperature(0, 79).build(),
                node("busy").cards(2, "A100").cardUtilization(1, 95).build()),
            task().gpus(2).build(), null, "LoadThresholdExceeded",
            "0/2 nodes are available: 2 with cards over load thresholds."),
        Arguments.of("enough cool cards besides a hot one",
            List.of(node("warm").cards(3, "A100").cardTemperature(0, 85).build()),
            task().gpus(2).build(), "warm", null, null),
        Arguments.of("a load reason only where the node would otherwise fit",
            List.of(node("hot-nv").cpu(99).build(), node("cool-full").busyCards(0, 1, 2, 3, 4, 5, 6, 7).build(),
                node("asc").vendor("ascend").build()),
            task().gpuType("nvidia").build(), null, "LoadThresholdExceeded",
            "0/3 nodes are available: 1 not nvidia, 1 fewer than 1 free cards, 1 over load thresholds (CPU at or"
                + " above 90 %)."),
        Arguments.of("a hot node that would not fit anyway is refused for that",
            List.of(node("hot-asc").vendor("ascend").cpu(99).build()),
            task().gpuType("nvidia").build(), null, "GPUTypeUnavailable", "0/1 nodes are available: 1 not nvidia."),
        Arguments.of("a shard needs a cool card",
            List.of(node("one").cards(1, "A100").cardUtilization(0, 99).build()),
            task().shard(4000).build(), null, "LoadThresholdExceeded",
            "0/1 nodes are available: 1 with cards over load thresholds."));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void decides(String name, List<NodeInfo> nodes, TaskRequest task, String expectedNode, String expectedCode,
               String expectedMessage) {
    Decision decision = PIPELINE.decide(task, new Snapshot(nodes), DEFAULTS);
    assertEquals(expectedNode, decision.nodeId(), name);
    if (expectedNode == null) {
      assertEquals(expectedCode, decision.code().name(), name);
      assertEquals(expectedMessage, decision.message(), name);
    } else {
      assertEquals(task.gpuRequired(), decision.gpuIndices().size(), name);
    }
  }

  @Test
  void cardsOverTheLoadThresholdsAreNeverPicked() {
    Snapshot snapshot = new Snapshot(List.of(node("mixed").cards(4, "A100").cardTemperature(0, 80)
        .cardUtilization(2, 97).build()));
    assertEquals(List.of(1, 3), PIPELINE.decide(task().gpus(2).build(), snapshot, DEFAULTS).gpuIndices());
    Decision shard = PIPELINE.decide(task().shard(4000).build(), new Snapshot(List.of(node("shards").cards(2, "A100")
        .shard(0, "team-a", 70000).cardTemperature(1, 90).build())), DEFAULTS);
    assertFalse(shard.isPlaced(), "the only card with room is hot: " + shard.message());
    Decision cool = PIPELINE.decide(task().shard(4000).build(), new Snapshot(List.of(node("shards").cards(2, "A100")
        .shard(1, "team-a", 70000).cardTemperature(1, 90).build())), DEFAULTS);
    assertEquals(0, cool.shard().cardIndex(), "best fit would take the fuller card 1, but it is hot");
  }

  @Test
  void aNodeThatCoolsDownIsJudgedAgain() {
    Snapshot snapshot = new Snapshot(List.of(node("only").cpu(95).build()));
    TaskRequest task = task().build();
    assertEquals("LoadThresholdExceeded", PIPELINE.decide(task, snapshot, DEFAULTS).code().name());
    snapshot.replace(node("only").cpu(20).build());
    assertEquals("only", PIPELINE.decide(task, snapshot, DEFAULTS).nodeId(), "the memo judged the new view");
  }

  @Test
  void binpackPrefersTheFullerNodeAndPicksFreeCards() {
    PluginSet binpack = REGISTRY.build(Map.of("binpack", new PluginConfig("binpack", true, 1, Map.of())));
    Snapshot snapshot = new Snapshot(List.of(node("loaded").busyCards(0, 1, 2, 3).cpu(60).build(),
        node("idle").cpu(5).build()));
    Decision decision = PIPELINE.decide(task().gpus(2).build(), snapshot, binpack);
    assertEquals("loaded", decision.nodeId());
    assertEquals(List.of(4, 5), decision.gpuIndices());
  }

  @Test
  void stagedBindsAreSeenByLaterTasksOfTheRound() {
    Snapshot snapshot = new Snapshot(List.of(node("only").cards(2, "A100").build()));
    Decision first = PIPELINE.decide(task().gpus(2).build(), snapshot, DEFAULTS);
    assertEquals(List.of(0, 1), first.gpuIndices());
    snapshot.assume(task().gpus(2).build(), first);
    Decision second = PIPELINE.decide(task().build(), snapshot, DEFAULTS);
    assertFalse(second.isPlaced());
    assertEquals("InsufficientResources", second.code().name());
  }

  @Test
  void lockedFiltersStayOnAndBinpackBeatsSpread() {
    PluginSet set = REGISTRY.build(Map.of(
        "resource-filter", new PluginConfig("resource-filter", false, 0, Map.of()),
        "gpu-filter", new PluginConfig("gpu-filter", false, 0, Map.of()),
        "spread", new PluginConfig("spread", true, 1, Map.of()),
        "binpack", new PluginConfig("binpack", true, 3, Map.of())));
    Map<String, PluginState> byName = set.states().stream()
        .collect(java.util.stream.Collectors.toMap(PluginState::name, state -> state));
    assertTrue(byName.get("resource-filter").enabled() && byName.get("resource-filter").locked());
    assertTrue(byName.get("gpu-filter").enabled() && byName.get("gpu-filter").locked());
    assertEquals(List.of("availability", "tenant", "resource-prefilter", "affinity", "gpu-filter", "resource-filter",
            "reservation", "nvlink", "rdma", "preempt"), set.filters().stream().map(filter -> filter.name()).toList(),
        "SPEC §2.1's chain first, then the plugin filters, in registration order");
    for (String builtIn : List.of("availability", "tenant", "resource-prefilter", "affinity")) {
      assertTrue(byName.get(builtIn).enabled() && byName.get(builtIn).locked(), builtIn);
      assertEquals("filter", byName.get(builtIn).kind(), builtIn);
    }
    assertTrue(byName.get("binpack").enabled());
    assertFalse(byName.get("spread").enabled());
    assertEquals(List.of("binpack", "nvlink", "topology", "rdma", "replica-spread"),
        set.scores().stream().map(score -> score.plugin().name()).toList());
    assertEquals("score+filter+bind", byName.get("nvlink").kind());
    assertEquals("filter+postfilter", byName.get("preempt").kind());
    assertEquals("running", byName.get("preempt").extra().get("preempt_stage"));
  }
}
