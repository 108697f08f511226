package io.heteroflow.controlplane.scheduler.plugins.frag;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import java.util.List;

/**
 * A node's free capacity as the fragmentation measure needs it: each card's free units (0 under a whole-card
 * task; capacity minus shards otherwise), the capacity of a card, free CPU and memory, and card models.
 */
final class FreeCapacity {
  final long[] free;
  final String[] models;
  /** Whether all cards are of one model. */
  final boolean oneModel;
  final long cardCapacity;
  double cpuFree;
  long memoryFree;

  private FreeCapacity(long[] free, String[] models, long cardCapacity, double cpuFree, long memoryFree) {
    this.free = free;
    this.models = models;
    boolean same = true;
    for (String model : models) {
      same &= model != null && model.equals(models[0]);
    }
    this.oneModel = same;
    this.cardCapacity = cardCapacity;
    this.cpuFree = cpuFree;
    this.memoryFree = memoryFree;
  }

  static FreeCapacity of(NodeInfo node, long reserveMb) {
    List<CardInfo> cards = node.cards();
    long[] free = new long[cards.size()];
    String[] models = new String[cards.size()];
    long capacity = 0;
    for (int i = 0; i < cards.size(); i++) {
      CardInfo card = cards.get(i);
      long cardCapacity = card.memoryTotalMb() - reserveMb;
      capacity = Math.max(capacity, cardCapacity);
      CardUse use = node.use(card.index());
      free[i] = use.wholeTasks() > 0 || card.memoryUsedPercent() >= NodeInfo.CARD_MEMORY_FULL_PERCENT ? 0
          : Math.max(0, cardCapacity - use.shardMemoryMb());
      models[i] = card.model();
    }
    return new FreeCapacity(free, models, Math.max(1, capacity), node.cpuFree(), node.memoryFreeMb());
  }

  FreeCapacity copy() {
    return new FreeCapacity(free.clone(), models, cardCapacity, cpuFree, memoryFree);
  }

  boolean allows(TaskShape shape, int card) {
    if (shape.models().isEmpty()) {
      return true;
    }
    for (String model : shape.models()) {
      if (model.equalsIgnoreCase(models[card])) {
        return true;
      }
    }
    return false;
  }

  boolean fullyFree(int card) {
    return free[card] >= cardCapacity;
  }

  long totalFree() {
    long total = 0;
    for (long units : free) {
      total += units;
    }
    return total;
  }

  /** Whether an earlier card has the same model and free units (placing there leaves an equivalent state). */
  boolean sameAsEarlierCard(int card) {
    for (int earlier = 0; earlier < card; earlier++) {
      if (free[earlier] == free[card] && java.util.Objects.equals(models[earlier], models[card])) {
        return true;
      }
    }
    return false;
  }

  /** The cards a slice of this shape could go on. */
  boolean sliceFits(TaskShape shape, int card) {
    return allows(shape, card) && free[card] >= shape.sliceUnits();
  }

  /** A copy with the shape placed: whole cards on the lowest free ones, a slice on {@code sliceCard}. */
  FreeCapacity after(TaskShape shape, int sliceCard) {
    FreeCapacity after = copy();
    after.cpuFree -= shape.cpuCores();
    after.memoryFree -= shape.memoryMb();
    if (shape.sliceUnits() > 0) {
      after.free[sliceCard] -= shape.sliceUnits();
    } else {
      after.placeWhole(shape);
    }
    return after;
  }

  /** Places a shape as the binder would (whole: the lowest free cards; slice: the fullest card that fits). */
  boolean place(TaskShape shape) {
    cpuFree -= shape.cpuCores();
    memoryFree -= shape.memoryMb();
    return placeWhole(shape) && placeFullestSlice(shape);
  }

  private boolean placeWhole(TaskShape shape) {
    if (shape.wholeCards() > 0) {
      int taken = 0;
      for (int card = 0; card < free.length && taken < shape.wholeCards(); card++) {
        if (allows(shape, card) && fullyFree(card)) {
          free[card] = 0;
          taken++;
        }
      }
      return taken == shape.wholeCards();
    }
    return true;
  }

  private boolean placeFullestSlice(TaskShape shape) {
    if (shape.sliceUnits() > 0) {
      int best = -1;
      for (int card = 0; card < free.length; card++) {
        if (allows(shape, card) && free[card] >= shape.sliceUnits() && (best < 0 || free[card] < free[best])) {
          best = card;
        }
      }
      if (best < 0) {
        return false;
      }
      free[best] -= shape.sliceUnits();
    }
    return true;
  }
}
