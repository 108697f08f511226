package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TaskEventFeed;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import java.time.Clock;
import java.util.List;
import java.util.TreeSet;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Task status changes to this control plane's own bus clients: polls task_events by id cursor (every
 * {@code pollMs}, the next poll once one is done) and publishes each status change LOCALLY (local-only delivery:
 * a clustered publish would reach every control plane's clients once per control plane) to
 * {@code heteroflow.tenant.<tenant>.task-events} and {@link BusAddresses#ADMIN_TASK_EVENTS}.
 *
 * <p>Ids come from a sequence, so a transaction holding a lower id may commit after a higher one was read. The
 * cursor therefore only advances over contiguous ids; ids above a gap that were already published are remembered
 * (never published twice), and a gap is skipped once it has lasted {@code gapWaitMs} (a rolled-back insert, or a
 * transaction open that long; normal ones commit in milliseconds). No trigger, no pg_notify: writers pay nothing.
 */
public final class TaskEventRelay extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(TaskEventRelay.class.getName());
  private static final int BATCH = 1000;
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);
  private final TaskEventFeed feed;
  private final long pollMs;
  private final long gapWaitMs;
  private final Clock clock;
  private final TreeSet<Long> publishedAboveCursor = new TreeSet<>();
  private long cursor;
  private long stuckSinceMs = -1;
  private volatile boolean stopped;

  public TaskEventRelay(TaskEventFeed feed, long pollMs, long gapWaitMs, Clock clock) {
    this.feed = feed;
    this.pollMs = pollMs;
    this.gapWaitMs = gapWaitMs;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    return feed.latestId().onSuccess(latest -> {
      cursor = latest;
      vertx.setTimer(pollMs, t -> poll());
    });
  }

  @Override
  public Future<?> stop() {
    stopped = true;
    return Future.succeededFuture();
  }

  private void poll() {
    feed.after(cursor, BATCH).onSuccess(this::relay)
        .onFailure(e -> LOG.log(Level.FINE, "task event relay: poll failed, retrying", e))
        .onComplete(done -> {
          if (!stopped) {
            vertx.setTimer(pollMs, t -> poll());
          }
        });
  }

  private void relay(List<TaskEventFeed.Event> events) {
    for (TaskEventFeed.Event event : events) {
      if (event.id() > cursor && publishedAboveCursor.add(event.id()) && event.statusChange()) {
        vertx.eventBus().publish(BusAddresses.tenantTaskEvents(event.tenant()), event.json(), LOCAL);
        vertx.eventBus().publish(BusAddresses.ADMIN_TASK_EVENTS, event.json(), LOCAL);
      }
    }
    advance();
  }

  /** Moves the cursor over contiguous ids; over a gap only once it has lasted gapWaitMs. */
  private void advance() {
    while (!publishedAboveCursor.isEmpty()) {
      long next = publishedAboveCursor.first();
      if (next != cursor + 1) {
        long now = clock.millis();
        if (stuckSinceMs < 0) {
          stuckSinceMs = now;
          return;
        }
        if (now - stuckSinceMs < gapWaitMs) {
          return;
        }
      }
      publishedAboveCursor.pollFirst();
      cursor = next;
      stuckSinceMs = -1;
    }
  }
}
