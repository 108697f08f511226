package io.heteroflow.controlplane.scheduler.plugins.frag;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PreScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.scheduler.framework.ShardPlacer;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.protocol.ShardQos;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * {@code frag} (off by default): prefers the placement that least increases the expected fragmentation of the
 * node's free GPU capacity, given the workload's mix of task shapes — the idea of FGD (ATC'23). A node's
 * expected fragmentation is the probability-weighted sum, over task shapes, of the free GPU units that shape
 * could not use there. A slice goes on the card that fragments least (this plugin also places shards); the
 * score is 50 minus the increase in cards, scaled so ±16 cards span [0, 100] (below 0 or above 100: clamped).
 * Beyond FGD, taking capacity of a card model that model-constrained tasks need more than an unconstrained
 * workload would (see {@link ModelPressure}) is charged in cards too, so flexible tasks leave scarce models free.
 */
public final class FragmentationScore implements PreScorePlugin, ScorePlugin, ShardPlacer {
  public static final String NAME = "frag";
  private static final double SPAN_CARDS = 16;
  /**
   * Cards of fragmentation charged per card a task takes of a model at twice the neutral pressure (measured on
   * gpuspec10-33, seeds 42-43: 1, 2 and 3 all lift them by 1-9 points; 2 was best on average, 0.5 lost on gpuspec33).
   */
  static final double PRESSURE_CARDS = 2;
  private final SchedulerConfig config;
  private final TaskShapeMix mix;
  /** The model pressure computed for the task being scored (pre-score), with that task's id. */
  private volatile Pressure current = new Pressure(null, ModelPressure.NEUTRAL);

  private record Pressure(UUID taskId, ModelPressure pressure) {
  }

  public FragmentationScore(SchedulerConfig config, TaskShapeMix mix) {
    this.config = config;
    this.mix = mix;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void preScore(TaskRequest task, List<NodeInfo> feasible) {
    mix.observe(TaskShape.of(task));
    // the free cards by model on the nodes this task could go to: the capacity the pressure is measured against
    Map<String, Double> freeCards = new HashMap<>();
    Map<String, Long> cardCapacity = new HashMap<>();
    for (NodeInfo node : feasible) {
      if (node.cards().isEmpty()) {
        continue;
      }
      FreeCapacity capacity = FreeCapacity.of(node, reserve(node));
      for (int card = 0; card < capacity.free.length; card++) {
        String model = capacity.models[card] == null ? "" : capacity.models[card].toLowerCase(Locale.ROOT);
        freeCards.merge(model, (double) capacity.free[card] / capacity.cardCapacity, Double::sum);
        cardCapacity.merge(model, capacity.cardCapacity, Math::max);
      }
    }
    current = new Pressure(task.id(), ModelPressure.of(mix.demands(), freeCards, cardCapacity));
  }

  @Override
  public double score(TaskRequest task, NodeInfo node) {
    if (node.cards().isEmpty()) {
      return 50;
    }
    FreeCapacity before = FreeCapacity.of(node, reserve(node));
    TaskShape shape = TaskShape.of(task);
    double increase = bestAfter(before, shape, null, node) - expectedFragment(before);
    double cards = increase / before.cardCapacity + scarcityCost(task, shape, before);
    return Math.max(0, Math.min(100, 50 - 50 * cards / SPAN_CARDS));
  }

  @Override
  public ShardAssignment place(TaskRequest task, NodeInfo node, TenantBoundary boundary) {
    FreeCapacity before = FreeCapacity.of(node, reserve(node));
    TaskShape shape = TaskShape.of(task);
    int card = bestSliceCard(before, shape, boundary, task.tenant(), node);
    if (card < 0) {
      return null;
    }
    long total = node.cards().get(card).memoryTotalMb();
    int compute = (int) Math.max(1, Math.min(100, Math.round(100.0 * task.gpuMemoryMb() / total)));
    return new ShardAssignment(node.cards().get(card).index(), task.gpuMemoryMb(), compute,
        ShardQos.levelFor(node.gpuVendor(), node.cards().get(card).model()));
  }

  /** The least expected fragmentation reachable by placing the shape on this node. */
  private double bestAfter(FreeCapacity before, TaskShape shape, TenantBoundary boundary, NodeInfo node) {
    if (shape.sliceUnits() <= 0) {
      return expectedFragment(before.after(shape, -1));
    }
    int card = bestSliceCard(before, shape, boundary, null, node);
    return card < 0 ? expectedFragment(before) : expectedFragment(before.after(shape, card));
  }

  /** The card (position in the node's card list) whose slice leaves the least expected fragmentation. */
  private int bestSliceCard(FreeCapacity before, TaskShape shape, TenantBoundary boundary, String tenant, NodeInfo node) {
    int best = -1;
    double bestFragment = Double.MAX_VALUE;
    for (int card = 0; card < before.free.length; card++) {
      if (!before.sliceFits(shape, card) || (boundary == null && before.sameAsEarlierCard(card)) || (boundary != null
          && !boundary.mayJoin(tenant, node.use(node.cards().get(card).index()).tenants()))) {
        continue;
      }
      double fragment = expectedFragment(before.after(shape, card));
      if (fragment < bestFragment || (fragment == bestFragment && before.free[card] < before.free[best])) {
        best = card;
        bestFragment = fragment;
      }
    }
    return best;
  }

  /**
   * The cards' worth of fragmentation charged for taking capacity of a model under pressure: the task's cards
   * times how far the pressure on the node's model(s) lies above (or below) that of an unconstrained workload.
   */
  private double scarcityCost(TaskRequest task, TaskShape shape, FreeCapacity before) {
    Pressure pressure = current;
    if (!task.id().equals(pressure.taskId()) || !shape.usesGpu()) {
      return 0;
    }
    double relative = 0;
    for (String model : before.models) {
      relative += pressure.pressure().relative(model);
    }
    relative /= before.models.length;
    double cards = shape.wholeCards() + (double) shape.sliceUnits() / before.cardCapacity;
    return PRESSURE_CARDS * cards * (relative - 1);
  }

  private long reserve(NodeInfo node) {
    return config.reserveMb(node.cards().get(0).memoryTotalMb());
  }

  double expectedFragment(FreeCapacity capacity) {
    return mix.groups().expectedFragment(capacity);
  }
}
