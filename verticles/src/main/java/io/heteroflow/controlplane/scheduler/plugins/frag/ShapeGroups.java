package io.heteroflow.controlplane.scheduler.plugins.frag;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A mix of task shapes compiled for the expected fragmentation: shapes that ask the same of the cards (whole
 * cards, or a slice, and the card models) form one group; inside a group the CPU asks are sorted with their
 * cumulative probabilities, so the part of a group that a node's free CPU can take is one binary search.
 * A node's expected fragmentation is then, per group, the free GPU units the group could not use there (when
 * the CPU fits) or all of them (when it does not), weighted by probability. Memory is not part of the measure
 * (as in FGD): it is a feasibility constraint of the filters only. Beyond FGD, the GPU units that the node's
 * free CPU could not serve at the mix's mean CPU per GPU unit also count as fragment.
 */
final class ShapeGroups {
  private static final double CPU_EPSILON = 1e-9;

  /** Shapes with the same card demand: their CPU asks ascending and the probability of asking at most each. */
  private record Group(int wholeCards, long sliceUnits, String[] models, double[] cpu, double[] cumulative) {
    double probability() {
      return cumulative[cumulative.length - 1];
    }

    /** The probability of the shapes of this group whose CPU ask fits {@code cpuFree}. */
    double fitting(double cpuFree) {
      int low = 0;
      int high = cpu.length;
      while (low < high) {
        int middle = (low + high) >>> 1;
        if (cpu[middle] <= cpuFree + CPU_EPSILON) {
          low = middle + 1;
        } else {
          high = middle;
        }
      }
      return low == 0 ? 0 : cumulative[low - 1];
    }

    boolean allows(String model) {
      if (models.length == 0) {
        return true;
      }
      for (String allowed : models) {
        if (allowed.equalsIgnoreCase(model)) {
          return true;
        }
      }
      return false;
    }

    /** The free units this group could not use on the cards when CPU is no obstacle (all when it fits nowhere). */
    long unusable(FreeCapacity capacity, long total) {
      if (wholeCards == 0 && sliceUnits == 0) {
        return 0;
      }
      boolean oneModel = capacity.oneModel;
      if (oneModel && !allows(capacity.models[0])) {
        return total;
      }
      long unusable = 0;
      int usable = 0;
      for (int card = 0; card < capacity.free.length; card++) {
        long free = capacity.free[card];
        boolean fits = (oneModel || allows(capacity.models[card]))
            && (wholeCards > 0 ? free >= capacity.cardCapacity : free >= sliceUnits);
        if (fits) {
          usable++;
        } else {
          unusable += free;
        }
      }
      return usable >= Math.max(1, wholeCards) ? unusable : total;
    }
  }

  private final Group[] groups;
  /** Over the GPU shapes of the mix: expected CPU, whole cards and slice units asked per task. */
  private final double gpuTaskCpu;
  private final double gpuTaskCards;
  private final double gpuTaskSlice;

  private ShapeGroups(Group[] groups, double gpuTaskCpu, double gpuTaskCards, double gpuTaskSlice) {
    this.groups = groups;
    this.gpuTaskCpu = gpuTaskCpu;
    this.gpuTaskCards = gpuTaskCards;
    this.gpuTaskSlice = gpuTaskSlice;
  }

  static ShapeGroups of(List<TaskShapeMix.Weighted> weights) {
    Map<List<Object>, List<TaskShapeMix.Weighted>> byCards = new LinkedHashMap<>();
    for (TaskShapeMix.Weighted weighted : weights) {
      TaskShape shape = weighted.shape();
      List<Object> key = List.of(shape.wholeCards(), shape.sliceUnits(), shape.models());
      byCards.computeIfAbsent(key, k -> new ArrayList<>()).add(weighted);
    }
    double cpu = 0;
    double cards = 0;
    double slice = 0;
    for (TaskShapeMix.Weighted weighted : weights) {
      if (weighted.shape().usesGpu()) {
        cpu += weighted.probability() * weighted.shape().cpuCores();
        cards += weighted.probability() * weighted.shape().wholeCards();
        slice += weighted.probability() * weighted.shape().sliceUnits();
      }
    }
    List<Group> groups = new ArrayList<>();
    byCards.values().forEach(members -> {
      members.sort((a, b) -> Double.compare(a.shape().cpuCores(), b.shape().cpuCores()));
      double[] asks = new double[members.size()];
      double[] cumulative = new double[members.size()];
      double sum = 0;
      for (int i = 0; i < members.size(); i++) {
        asks[i] = members.get(i).shape().cpuCores();
        sum += members.get(i).probability();
        cumulative[i] = sum;
      }
      TaskShape first = members.get(0).shape();
      groups.add(new Group(first.wholeCards(), first.sliceUnits(), first.models().toArray(String[]::new), asks, cumulative));
    });
    return new ShapeGroups(groups.toArray(Group[]::new), cpu, cards, slice);
  }

  /** The expected free GPU units a task drawn from the mix could not use on a node in this state. */
  double expectedFragment(FreeCapacity capacity) {
    long total = capacity.totalFree();
    if (total == 0) {
      return 0;
    }
    double expected = strandedByCpu(capacity, total);
    for (Group group : groups) {
      double fitting = group.fitting(capacity.cpuFree);
      expected += (group.probability() - fitting) * total;
      if (fitting > 0) {
        expected += fitting * group.unusable(capacity, total);
      }
    }
    return expected;
  }

  /**
   * The free units the node's free CPU could not serve at the mix's mean CPU per GPU unit: GPU that will sit
   * idle for lack of CPU even if each single task shape still fits (FGD only sees the next task).
   */
  double strandedByCpu(FreeCapacity capacity, long total) {
    double units = gpuTaskCards * capacity.cardCapacity + gpuTaskSlice;
    if (gpuTaskCpu <= 0 || units <= 0) {
      return 0;
    }
    double servable = capacity.cpuFree * units / gpuTaskCpu;
    return Math.max(0, total - servable);
  }

  @Override
  public String toString() {
    return Arrays.toString(groups);
  }
}
