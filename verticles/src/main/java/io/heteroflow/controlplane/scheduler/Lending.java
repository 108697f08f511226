package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * Training borrow in the round's view (SPEC §14): training is never preempted, so it cannot borrow what reclaim
 * would take back; instead a training task its own quota refuses may run on a queue that has left its guarantee idle
 * for at least {@code borrow_idle_seconds} (the borrow patrol keeps {@code idle_since}), up to
 * {@code training_borrow_percent} of that guarantee in all, and never beyond what the lender leaves unused (its own
 * use plus everything it has lent stays within its guarantee: the lender's guarantee is honoured from the rest).
 * The bind re-checks the same in PostgreSQL under the lender's lock ({@code QuotaCheck}); this only avoids binds
 * bound to fail.
 */
final class Lending {
  private static final double EPSILON = 1e-9;

  /** A queue idle long enough: its guarantee, its subtree's own use (lent capacity aside), what it lent, staged. */
  private static final class Lender {
    final double guaranteed;
    final double own;
    double lent;

    Lender(double guaranteed, double own, double lent) {
      this.guaranteed = guaranteed;
      this.own = own;
      this.lent = lent;
    }
  }

  private final QueueingConfig queueing;
  private final Clock clock;
  private final Map<String, Lender> lenders = new HashMap<>();

  Lending(QueueingConfig queueing, Clock clock) {
    this.queueing = queueing;
    this.clock = clock;
  }

  void clear() {
    lenders.clear();
  }

  /** The lenders of this round, from the queues, their charged use and the borrowing read. */
  void read(List<QueueRecord> tree, QueueShares shares, QueueStore.Borrowing borrowing) {
    Instant idleBefore = clock.instant().minusSeconds(queueing.borrowIdleSeconds());
    Map<String, String> parents = new HashMap<>();
    tree.forEach(queue -> parents.put(queue.name(), queue.parent()));
    // what each subtree has lent: its charged use less that is its own use
    Map<String, Double> lentBelow = new HashMap<>();
    borrowing.lent().forEach((lender, amount) -> {
      for (String up = lender; up != null; up = parents.get(up)) {
        lentBelow.merge(up, amount, Double::sum);
      }
    });
    for (QueueRecord queue : tree) {
      Instant since = borrowing.idleSince().get(queue.name());
      if (queue.parent() != null && queue.guaranteed() > 0 && since != null && !since.isAfter(idleBefore)) {
        lenders.put(queue.name(), new Lender(queue.guaranteed(), shares.use(queue.name())
            - lentBelow.getOrDefault(queue.name(), 0.0), borrowing.lent().getOrDefault(queue.name(), 0.0)));
      }
    }
  }

  /**
   * The lender with the most room that can take {@code gpuEq} for a task of {@code queue} (never the queue itself
   * nor one above or below it), or null.
   */
  String lender(String queue, double gpuEq, BiPredicate<String, String> related) {
    String best = null;
    double bestRoom = 0;
    for (Map.Entry<String, Lender> each : lenders.entrySet()) {
      Lender lender = each.getValue();
      double room = Math.min(lender.guaranteed * queueing.trainingBorrowPercent() / 100.0 - lender.lent,
          lender.guaranteed - lender.own - lender.lent);
      if (!related.test(queue, each.getKey()) && gpuEq <= room + EPSILON
          && (best == null || room > bestRoom || (room == bestRoom && each.getKey().compareTo(best) < 0))) {
        best = each.getKey();
        bestRoom = room;
      }
    }
    return best;
  }

  /** Stages {@code gpuEq} lent by {@code lender} to a placement of this round. */
  void lend(String lender, double gpuEq) {
    lenders.get(lender).lent += gpuEq;
  }
}
