package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The borrow patrol (SPEC §14, leader only, every 15 s): keeps each queue's {@code idle_since} — since when its own
 * use has been below its guarantee, cleared once it is not — and wakes the training tasks waiting on their quota
 * while some queue has been idle for {@code borrow_idle_seconds}, so they try to borrow at once rather than at the
 * scheduler's next tick. What may be lent is decided by the round and, under the lender's lock, by the bind; the
 * patrol only keeps the clock of idleness, so a stale mark costs a refused try, never a broken guarantee.
 */
public final class BorrowPatrolVerticle extends VerticleBase {
  /** How often the patrol looks (SPEC §14). */
  public static final long PERIOD_MS = 15_000;
  private static final Logger LOG = Logger.getLogger(BorrowPatrolVerticle.class.getName());
  private final QueueStore queues;
  private final Leadership leadership;
  private final long periodMs;
  private final int borrowIdleSeconds;

  public BorrowPatrolVerticle(QueueStore queues, Leadership leadership, long periodMs, int borrowIdleSeconds) {
    this.queues = queues;
    this.leadership = leadership;
    this.periodMs = periodMs;
    this.borrowIdleSeconds = borrowIdleSeconds;
  }

  @Override
  public Future<?> start() {
    vertx.setPeriodic(periodMs, id -> {
      if (leadership.leading()) {
        patrol().onFailure(e -> LOG.log(Level.FINE, "borrow patrol failed; the next period retries", e));
      }
    });
    return Future.succeededFuture();
  }

  /** One pass: idle marks brought up to date, then a kick per training task that may now borrow; answers them. */
  public Future<List<UUID>> patrol() {
    return queues.markIdle()
        .compose(changed -> queues.trainingWaitingToBorrow(borrowIdleSeconds))
        .map(waiting -> {
          waiting.forEach(task -> vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.task(task).toJson()));
          return waiting;
        });
  }
}
