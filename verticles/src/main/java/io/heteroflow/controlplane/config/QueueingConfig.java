package io.heteroflow.controlplane.config;

/**
 * The queueing settings of SPEC §13 (conf/config.yaml, {@code queueing:}): a task or group waiting at least
 * {@code reserveAfterSeconds} plans its reservation before anything that arrived after it; a training task may borrow
 * cards another queue has left idle for {@code borrowIdleSeconds}, up to {@code trainingBorrowPercent} of that
 * queue's guarantee.
 */
public record QueueingConfig(int reserveAfterSeconds, int borrowIdleSeconds, int trainingBorrowPercent) {
  public static final QueueingConfig DEFAULTS = new QueueingConfig(300, 600, 20);

  public QueueingConfig {
    if (reserveAfterSeconds < 0 || borrowIdleSeconds < 0) {
      throw new IllegalArgumentException("queueing: reserve_after_seconds and borrow_idle_seconds must be >= 0");
    }
    if (trainingBorrowPercent < 0 || trainingBorrowPercent > 100) {
      throw new IllegalArgumentException("queueing: training_borrow_percent must be between 0 and 100");
    }
  }
}
