package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.PreScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The pipeline's per-snapshot decision memo (used when no PreFilter / PreScore / NormalizeScore plugin runs)
 * decides exactly like a full evaluation of every node: same nodes, same cards and shards, same reasons, placement after
 * placement on a staged snapshot.
 */
class DecisionMemoTest {
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);

  private static List<NodeInfo> cluster(Random random) {
    List<NodeInfo> nodes = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      Fixtures.NodeBuilder node = node(String.format("n%02d", i)).vendor(i % 7 == 0 ? "ascend" : "nvidia")
          .cards(8, i % 5 == 0 ? "H100" : "A100").label("pool", i % 3 == 0 ? "batch" : "serving");
      for (int card = 0; card < 8; card++) {
        int roll = random.nextInt(10);
        if (roll < 3) {
          node.busyCards(card);
        } else if (roll < 5) {
          node.shard(card, random.nextBoolean() ? "team-a" : "team-b", 8000 + random.nextInt(20000));
        }
      }
      if (i % 11 == 0) {
        node.offline();
      }
      nodes.add(node.build());
    }
    return nodes;
  }

  private static TaskRequest randomTask(Random random) {
    Fixtures.TaskBuilder task = task().tenant(random.nextBoolean() ? "team-a" : "team-b");
    switch (random.nextInt(6)) {
      case 0 -> task.shard(4000 + 4000L * random.nextInt(4));
      case 1 -> task.gpus(8);
      case 2 -> task.gpus(2).gpuType("ascend");
      case 3 -> task.gpus(1).models("H100");
      case 4 -> task.gpus(4).selector("pool", "batch");
      default -> task.gpus(1 + random.nextInt(2));
    }
    return task.build();
  }

  @Test
  void memoizedDecisionsEqualFullEvaluationsAlongAStagedRound() {
    compareAlongAStagedRound(new Random(7), 400, DecisionMemoTest::randomTask);
  }

  @Test
  void moreShapesThanTheMemoKeepsStillDecideTheSame() {
    // cpu_cores 0.25, 0.5, … makes every task a shape of its own: the memo evicts and rebuilds shapes
    int[] next = {0};
    compareAlongAStagedRound(new Random(11), 300,
        random -> randomTaskWithCpu(random, 0.25 * (1 + next[0]++ % 150)));
  }

  private static TaskRequest randomTaskWithCpu(Random random, double cpu) {
    TaskRequest task = randomTask(random);
    return new TaskRequest(task.id(), task.tenant(), task.type(), task.priority(), task.gpuRequired(),
        task.gpuMemoryMb(), task.gpuType(), task.gpuModels(), cpu, task.memoryMb(), task.nodeSelector(), task.labels());
  }

  private static void compareAlongAStagedRound(Random random, int tasks,
                                               Function<Random, TaskRequest> nextTask) {
    List<NodeInfo> nodes = cluster(random);
    PluginSet memoized = BuiltInPlugins.registry(Fixtures.CONFIG).build(Map.of());
    PreScorePlugin observer = new PreScorePlugin() {
      @Override
      public String name() {
        return "observer";
      }

      @Override
      public void preScore(TaskRequest task, List<NodeInfo> feasible, CycleState state) {
      }
    };
    PluginSet full = memoized.withPreScores(List.of(observer));
    Snapshot fast = new Snapshot(nodes, Fixtures.groups("g:team-a,team-b"));
    Snapshot slow = new Snapshot(nodes, Fixtures.groups("g:team-a,team-b"));
    int placed = 0;
    int refused = 0;
    for (int i = 0; i < tasks; i++) {
      TaskRequest task = nextTask.apply(random);
      Decision expected = PIPELINE.decide(task, slow, full);
      Decision actual = PIPELINE.decide(task, fast, memoized);
      assertEquals(expected, actual, "task " + i + ": " + task);
      if (expected.isPlaced()) {
        slow.assume(task, expected);
        fast.assume(task, actual);
        placed++;
      } else {
        refused++;
      }
    }
    assertTrue(placed > 50 && refused > 10, placed + " placed, " + refused + " refused: both paths exercised");
  }
}
