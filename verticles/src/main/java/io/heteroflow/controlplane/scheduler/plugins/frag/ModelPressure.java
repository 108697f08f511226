package io.heteroflow.controlplane.scheduler.plugins.frag;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * How much the workload's model-constrained tasks lean on each card model's free capacity, relative to a
 * workload without model constraints. A shape's expected demand (cards per task, weighted by probability) is
 * spread over the free cards of the models it may use, so a model that some shapes need and few cards offer
 * (a scarce model) is under high pressure; one that unconstrained tasks alone want sits at 1. Placing a task on
 * a model under pressure takes capacity from the tasks that can go nowhere else: {@link FragmentationScore}
 * charges for it, so flexible tasks leave scarce models to the tasks that need them.
 */
final class ModelPressure {
  static final ModelPressure NEUTRAL = new ModelPressure(Map.of());

  /** The expected demand, per task of the mix, of the GPU shapes that may use exactly these models (empty: any). */
  record Demand(Set<String> models, double wholeCards, double sliceUnits) {
  }

  /** Relative pressure by model (lower case); models not listed are at 1. */
  private final Map<String, Double> relative;

  private ModelPressure(Map<String, Double> relative) {
    this.relative = relative;
  }

  /** The mix's GPU demand by allowed model set. */
  static List<Demand> demands(List<TaskShapeMix.Weighted> weights) {
    Map<Set<String>, double[]> bySet = new LinkedHashMap<>();
    for (TaskShapeMix.Weighted weighted : weights) {
      TaskShape shape = weighted.shape();
      if (!shape.usesGpu()) {
        continue;
      }
      Set<String> models = new TreeSet<>();
      shape.models().forEach(model -> models.add(model.toLowerCase(Locale.ROOT)));
      double[] sums = bySet.computeIfAbsent(Set.copyOf(models), key -> new double[2]);
      sums[0] += weighted.probability() * shape.wholeCards();
      sums[1] += weighted.probability() * shape.sliceUnits();
    }
    List<Demand> demands = new ArrayList<>();
    bySet.forEach((models, sums) -> demands.add(new Demand(models, sums[0], sums[1])));
    return demands;
  }

  /**
   * The pressure on each model given its free cards and card capacity: for model m, the sum over the shapes
   * that may use m of their demand (in cards of m) divided by the free cards of all the models they may use,
   * over the same sum as if no shape were constrained. Without constrained shapes every model is at exactly 1.
   */
  static ModelPressure of(List<Demand> demands, Map<String, Double> freeCards, Map<String, Long> cardCapacity) {
    boolean constrained = demands.stream().anyMatch(demand -> !demand.models().isEmpty());
    double allFree = freeCards.values().stream().mapToDouble(Double::doubleValue).sum();
    if (!constrained || allFree <= 0) {
      return NEUTRAL;
    }
    Map<String, Double> relative = new HashMap<>();
    freeCards.forEach((model, free) -> {
      long capacity = Math.max(1, cardCapacity.getOrDefault(model, 1L));
      double pressure = 0;
      double unconstrained = 0;
      for (Demand demand : demands) {
        double cards = demand.wholeCards() + demand.sliceUnits() / capacity;
        unconstrained += cards / allFree;
        if (demand.models().isEmpty()) {
          pressure += cards / allFree;
        } else if (demand.models().contains(model)) {
          double reachable = demand.models().stream().mapToDouble(m -> freeCards.getOrDefault(m, 0.0)).sum();
          pressure += reachable > 0 ? cards / reachable : 0;
        }
      }
      relative.put(model, unconstrained <= 0 ? 1 : pressure / unconstrained);
    });
    return new ModelPressure(relative);
  }

  /** The pressure on the free capacity of a node's cards of this model. */
  double relative(String model) {
    return model == null ? 1 : relative.getOrDefault(model.toLowerCase(Locale.ROOT), 1.0);
  }
}
