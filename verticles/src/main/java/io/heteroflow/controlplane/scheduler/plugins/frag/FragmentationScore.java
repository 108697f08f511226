package io.heteroflow.controlplane.scheduler.plugins.frag;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginSetting;
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

/**
 * {@code frag} (off by default): prefers the placement that least increases the expected fragmentation of the
 * node's free GPU capacity, given the workload's mix of task shapes — the idea of FGD (ATC'23). A node's
 * expected fragmentation is the probability-weighted sum, over task shapes, of the free GPU units that shape
 * could not use there. A slice goes on the card that fragments least (this plugin also places shards); the
 * score is 50 minus the increase in cards, scaled so ±16 cards span [0, 100] (below 0 or above 100: clamped).
 * Beyond FGD, taking capacity of a card model that model-constrained tasks need more than an unconstrained
 * workload would (see {@link ModelPressure}) is charged in cards too, so flexible tasks leave scarce models free
 * (setting {@code pressure_cards}). The pressure is computed per decision in PreScore and kept in the decision's
 * {@link CycleState}: two decisions never see each other's.
 */
public final class FragmentationScore implements PreScorePlugin, ScorePlugin, ShardPlacer {
  public static final String NAME = "frag";
  private static final double SPAN_CARDS = 16;
  /**
   * Cards of fragmentation charged per card a task takes of a model at twice the neutral pressure (measured on
   * gpuspec10-33, seeds 42-43: 1, 2 and 3 all lift them by 1-9 points; 2 was best on average, 0.5 lost on gpuspec33).
   */
  static final double PRESSURE_CARDS = 2;
  public static final String PRESSURE_CARDS_SETTING = "pressure_cards";
  /** The model pressure of the free cards this decision's task passed the filters on (written by PreScore). */
  static final CycleState.Key<ModelPressure> PRESSURE = CycleState.key("frag.model-pressure");
  private final SchedulerConfig config;
  private final TaskShapeMix mix;
  private final double pressureCards;

  public FragmentationScore(SchedulerConfig config, TaskShapeMix mix) {
    this(config, mix, PRESSURE_CARDS);
  }

  public FragmentationScore(SchedulerConfig config, TaskShapeMix mix, double pressureCards) {
    this.config = config;
    this.mix = mix;
    this.pressureCards = pressureCards;
  }

  /** frag learning (or given) the workload's mix of shapes in {@code mix}, shared by every set the registry builds. */
  public static PluginDefinition definition(TaskShapeMix mix) {
    return PluginDefinition.of(NAME, args -> new FragmentationScore(args.config(), mix,
        args.decimal(PRESSURE_CARDS_SETTING)), PluginSetting.decimal(PRESSURE_CARDS_SETTING, PRESSURE_CARDS, 0, 10,
        "cards of fragmentation charged per card taken of a model at twice the neutral pressure (0: no charge)"));
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void preScore(TaskRequest task, List<NodeInfo> feasible, CycleState state) {
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
    state.write(PRESSURE, ModelPressure.of(mix.demands(), freeCards, cardCapacity));
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    if (node.cards().isEmpty()) {
      return 50;
    }
    FreeCapacity before = FreeCapacity.of(node, reserve(node));
    TaskShape shape = TaskShape.of(task);
    double increase = bestAfter(before, shape, null, node) - expectedFragment(before);
    double cards = increase / before.cardCapacity + scarcityCost(shape, before, state.read(PRESSURE));
    return Math.max(0, Math.min(100, 50 - 50 * cards / SPAN_CARDS));
  }

  @Override
  public ShardAssignment place(TaskRequest task, NodeInfo node, TenantBoundary boundary, CycleState state) {
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
   * times how far the pressure on the node's model(s) lies above (or below) that of an unconstrained workload;
   * nothing without a pressure (no PreScore ran in this decision).
   */
  private double scarcityCost(TaskShape shape, FreeCapacity before, ModelPressure pressure) {
    if (pressure == null || !shape.usesGpu()) {
      return 0;
    }
    double relative = 0;
    for (String model : before.models) {
      relative += pressure.relative(model);
    }
    relative /= before.models.length;
    double cards = shape.wholeCards() + (double) shape.sliceUnits() / before.cardCapacity;
    return pressureCards * cards * (relative - 1);
  }

  private long reserve(NodeInfo node) {
    return config.reserveMb(node.cards().get(0).memoryTotalMb());
  }

  double expectedFragment(FreeCapacity capacity) {
    return mix.groups().expectedFragment(capacity);
  }
}
