package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.plugins.frag.FragmentationScore;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** frag on hand-checked cases: the expected fragmentation of free capacity under a mix of task shapes. */
class FragmentationScoreTest {
  /** Cards of 1000 units and no reserve, as in the trace simulator. */
  private static final SchedulerConfig UNITS = new SchedulerConfig(7200, 0, 0, 8000, 8999, 64,
      new LoadThresholds(100, 100, 100, 100, 1000), Map.of());

  private static NodeInfo oneCard(String id) {
    return node(id).cards(1, "T4").cardMemory(1000).build();
  }

  @Test
  void aHalfSliceGoesWhereItCompletesACardNotWhereItBreaksOne() {
    // mix: half the tasks want half a card, half a whole card
    TaskRequest half = task().shard(500).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(half), TaskShape.of(task().gpus(1).build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    NodeInfo halfUsed = node("half").cards(1, "T4").cardMemory(1000).shard(0, "team-a", 500).build();
    NodeInfo empty = oneCard("empty");
    // on "half": the card is completed, nothing is left to fragment (increase -250: the 500 free units were
    // useless to the whole-card half of the mix); on "empty": 500 units left that whole-card tasks cannot use
    double onHalf = frag.score(half, halfUsed, new CycleState());
    double onEmpty = frag.score(half, empty, new CycleState());
    assertEquals(50 + 50 * (250.0 / 1000) / 16, onHalf, 1e-9);
    assertEquals(50 - 50 * (250.0 / 1000) / 16, onEmpty, 1e-9);
    assertTrue(onHalf > onEmpty);
  }

  @Test
  void theSliceGoesOnTheCardThatFragmentsLeast() {
    TaskRequest small = task().shard(300).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(small), TaskShape.of(task().shard(700).build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    // card 0 has 700 free (a 700 task fits it exactly), card 1 has 300 free: 300 belongs on card 1
    NodeInfo node = node("n").cards(2, "T4").cardMemory(1000).shard(0, "team-a", 300).shard(1, "team-a", 700).build();
    assertEquals(1, frag.place(small, node, TenantBoundary.ISOLATED, new CycleState()).cardIndex());
  }

  @Test
  void cpuTakenFromANodeWhoseCardsStillNeedItCountsTheCardsItStrands() {
    // mix: whole-card tasks with 8 cores each, so a free card needs 8 free cores
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(task().gpus(1).cpuCores(8).build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    TaskRequest cpuOnly = task().gpus(0).cpuCores(4).build();
    NodeInfo tight = node("tight").cards(2, "T4").cardMemory(1000).cpuCores(16, 0).build();
    NodeInfo roomy = node("roomy").cards(2, "T4").cardMemory(1000).cpuCores(64, 0).build();
    // on "tight": 12 cores serve 1.5 of the 2 free cards, 500 units are stranded (FGD alone sees no change,
    // as one 8-core task still fits); on "roomy": 60 cores serve both cards
    assertEquals(50 - 50 * (500.0 / 1000) / 16, frag.score(cpuOnly, tight, new CycleState()), 1e-9);
    assertEquals(50, frag.score(cpuOnly, roomy, new CycleState()), 1e-9);
  }
}
