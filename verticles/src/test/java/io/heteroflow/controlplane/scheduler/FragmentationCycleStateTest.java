package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * frag's per-decision model pressure lives in each decision's CycleState: one plugin instance deciding for many
 * tasks at once, on several threads, decides each exactly as it does alone (before, a field held the pressure of
 * whichever task pre-scored last, so a concurrent decision lost its charge).
 */
class FragmentationCycleStateTest {
  private static final SchedulerConfig UNITS = new SchedulerConfig(7200, 0, 0, 8000, 8999, 64,
      new LoadThresholds(100, 100, 100, 100, 1000), Map.of());
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(UNITS);

  private static List<NodeInfo> cluster() {
    List<NodeInfo> nodes = new ArrayList<>();
    // enough nodes that a decision's scoring takes long enough for the others to pre-score in between
    for (int i = 0; i < 150; i++) {
      Fixtures.NodeBuilder node = node(String.format("n%03d", i)).cards(2, i % 3 == 0 ? "T4" : "G2").cardMemory(1000);
      if (i % 4 == 1) {
        node.busyCards(0);
      }
      if (i % 5 == 2) {
        node.shard(1, "team-a", 400);
      }
      nodes.add(node.build());
    }
    return nodes;
  }

  private static List<TaskRequest> tasks(Random random) {
    List<TaskRequest> tasks = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      tasks.add(switch (random.nextInt(4)) {
        case 0 -> task().tenant("team-a").gpus(1).build();
        case 1 -> task().tenant("team-a").gpus(1).models("T4").build();
        case 2 -> task().tenant("team-a").gpus(2).build();
        default -> task().tenant("team-a").shard(300).build();
      });
    }
    return tasks;
  }

  @Test
  void concurrentDecisionsSharingOnePluginEachKeepTheirOwnPressure() throws Exception {
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(task().gpus(1).build()),
        TaskShape.of(task().gpus(1).models("T4").build()), TaskShape.of(task().shard(300).build())));
    PluginSet plugins = BuiltInPlugins.registry(UNITS, mix)
        .build(Map.of("frag", new PluginConfig("frag", true, 1, Map.of()),
            "spread", new PluginConfig("spread", false, 0, Map.of())));
    List<NodeInfo> nodes = cluster();
    List<TaskRequest> tasks = tasks(new Random(3));
    Map<UUID, Decision> alone = new HashMap<>();
    for (TaskRequest task : tasks) {
      alone.put(task.id(), PIPELINE.decide(task, new Snapshot(nodes), plugins));
    }
    assertFalse(alone.values().stream().allMatch(decision -> decision.score() == alone.values().iterator().next()
        .score()), "the scores differ between tasks: a mix-up would show");

    ExecutorService threads = Executors.newFixedThreadPool(4);
    try {
      List<Future<Map<UUID, Decision>>> runs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int offset = t * 30;
        runs.add(threads.submit(() -> {
          Map<UUID, Decision> decided = new HashMap<>();
          for (int i = 0; i < tasks.size(); i++) {
            TaskRequest task = tasks.get((i + offset) % tasks.size());
            decided.put(task.id(), PIPELINE.decide(task, new Snapshot(nodes), plugins));
          }
          return decided;
        }));
      }
      for (Future<Map<UUID, Decision>> run : runs) {
        Map<UUID, Decision> decided = run.get();
        for (TaskRequest task : tasks) {
          assertEquals(alone.get(task.id()), decided.get(task.id()), "task " + task);
        }
      }
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void thePressureChargeReachesTheScoreOnlyThroughThePipelinesPreScore() {
    // a T4-constrained half of the mix puts T4 under pressure: a flexible task pays for a T4 card in its decision
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(task().gpus(1).build()),
        TaskShape.of(task().gpus(1).models("T4").build())));
    Map<String, PluginConfig> fragOnly = Map.of("frag", new PluginConfig("frag", true, 1, Map.of()),
        "spread", new PluginConfig("spread", false, 0, Map.of()), "nvlink", new PluginConfig("nvlink", false, 0, Map.of()),
        "topology", new PluginConfig("topology", false, 0, Map.of()), "rdma", new PluginConfig("rdma", false, 0, Map.of()));
    PluginSet charged = BuiltInPlugins.registry(UNITS, mix).build(fragOnly);
    Map<String, PluginConfig> uncharged = new HashMap<>(fragOnly);
    uncharged.put("frag", new PluginConfig("frag", true, 1, Map.of("pressure_cards", 0)));
    PluginSet free = BuiltInPlugins.registry(UNITS, mix).build(uncharged);
    List<NodeInfo> t4AndG2 = List.of(node("t4").cards(1, "T4").cardMemory(1000).build(),
        node("g2").cards(1, "G2").cardMemory(1000).build());
    TaskRequest flexible = task().gpus(1).build();
    double withCharge = PIPELINE.decide(flexible, new Snapshot(t4AndG2), charged).score();
    double withoutCharge = PIPELINE.decide(flexible, new Snapshot(t4AndG2), free).score();
    assertNotEquals(withoutCharge, withCharge, "the setting pressure_cards reaches the plugin through its factory");
    assertEquals(withCharge, PIPELINE.decide(flexible, new Snapshot(t4AndG2), charged).score(), 0,
        "a second decision computes its own pressure, the same");
  }
}
