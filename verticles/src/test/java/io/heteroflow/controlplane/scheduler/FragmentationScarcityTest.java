package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.frag.FragmentationScore;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** frag's charge for taking a scarce card model from the tasks that can use no other, on hand-checked cases. */
class FragmentationScarcityTest {
  /** Cards of 1000 units and no reserve, as in the trace simulator. */
  private static final SchedulerConfig UNITS = new SchedulerConfig(7200, 0, 0, 8000, 8999, 64,
      new LoadThresholds(100, 100, 100, 100, 1000), Map.of());

  private static final NodeInfo T4 = node("t4").cards(1, "T4").cardMemory(1000).build();
  private static final NodeInfo G2 = node("g2").cards(1, "G2").cardMemory(1000).build();

  @Test
  void aFlexibleTaskLeavesTheScarceModelToTheTasksThatNeedIt() {
    // mix: half the tasks take a whole card of any model, half a whole T4 card; free: one T4 card, one G2 card
    TaskRequest any = task().gpus(1).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(any), TaskShape.of(task().gpus(1).models("T4").build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    CycleState decision = new CycleState();
    frag.preScore(any, List.of(T4, G2), decision);
    // pressure on T4: 0.5 card / 2 free cards (any) + 0.5 card / 1 free T4 card = 0.75, on G2: 0.25; without
    // constraints both would be 1 card / 2 free cards = 0.5, so T4 is at 1.5 and G2 at 0.5: one card on T4
    // costs 2 cards per card × (1.5 − 1) = +1 card, on G2 2 × (0.5 − 1) = −1 card.
    // Fragmentation: on T4 nothing changes (0 before, 0 after); G2's free card was useless to the T4 half of
    // the mix (500 units of fragment before, 0 after): increase −0.5 card.
    assertEquals(50 - 50 * (0 + 1.0) / 16, frag.score(any, T4, decision), 1e-9);
    assertEquals(50 - 50 * (-0.5 - 1.0) / 16, frag.score(any, G2, decision), 1e-9);
    assertTrue(frag.score(any, G2, decision) > frag.score(any, T4, decision));
  }

  @Test
  void withoutModelConstraintsNothingIsCharged() {
    TaskRequest any = task().gpus(1).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(any), TaskShape.of(task().shard(500).build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    double before = frag.score(any, T4, new CycleState());
    CycleState decision = new CycleState();
    frag.preScore(any, List.of(T4, G2), decision);
    assertEquals(before, frag.score(any, T4, decision), 0);
    assertEquals(before, frag.score(any, G2, decision), 0);
  }

  @Test
  void aChargeComputedInOneDecisionIsNotAppliedInAnother() {
    TaskRequest any = task().gpus(1).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(any), TaskShape.of(task().gpus(1).models("T4").build())));
    FragmentationScore frag = new FragmentationScore(UNITS, mix);
    TaskRequest other = task().gpus(1).build();
    CycleState otherDecision = new CycleState();
    double unchargedOnT4 = frag.score(other, T4, otherDecision);
    CycleState decision = new CycleState();
    frag.preScore(any, List.of(T4, G2), decision);
    assertEquals(unchargedOnT4, frag.score(other, T4, otherDecision), 0, "the other decision has no pressure");
    assertTrue(frag.score(any, T4, decision) < unchargedOnT4, "this decision's pressure charges T4");
  }

  @Test
  void theChargeIsTheSettingsPressureCards() {
    TaskRequest any = task().gpus(1).build();
    TaskShapeMix mix = TaskShapeMix.fixed(List.of(TaskShape.of(any), TaskShape.of(task().gpus(1).models("T4").build())));
    FragmentationScore uncharged = new FragmentationScore(UNITS, mix, 0);
    FragmentationScore doubled = new FragmentationScore(UNITS, mix, 4);
    CycleState decision = new CycleState();
    uncharged.preScore(any, List.of(T4, G2), decision);
    assertEquals(50, uncharged.score(any, T4, decision), 1e-9, "no fragmentation change, no charge");
    assertEquals(50 - 50 * 2.0 / 16, doubled.score(any, T4, decision), 1e-9, "4 cards per card × (1.5 − 1)");
  }
}
