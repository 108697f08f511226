package io.heteroflow.bench;

import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts bind requests (each a batch of binds) in flight on the event bus (an outbound interceptor: a request to
 * {@link BusAddresses#SCHEDULER_BIND} starts one, the BindVerticle's reply ends it), so the benchmark can say
 * how many binds the scheduler really had outstanding at once.
 */
final class BindTracker {
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger max = new AtomicInteger();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong inFlightSum = new AtomicLong();

  BindTracker(EventBus bus) {
    bus.addOutboundInterceptor(context -> {
      Message<?> message = context.message();
      if (BusAddresses.SCHEDULER_BIND.equals(message.address())) {
        int now = inFlight.incrementAndGet();
        max.accumulateAndGet(now, Math::max);
        sent.incrementAndGet();
        inFlightSum.addAndGet(now);
      } else if (message.address() != null && message.address().startsWith("__vertx.reply")
          && message.body() instanceof JsonObject body && body.containsKey("outcomes")) {
        inFlight.decrementAndGet();
      }
      context.next();
    });
  }

  /** Starts a new window: max and averages from now on. */
  void reset() {
    max.set(inFlight.get());
    sent.set(0);
    inFlightSum.set(0);
  }

  JsonObject window() {
    long requests = sent.get();
    return new JsonObject().put("requests", requests).put("max_in_flight", max.get())
        .put("mean_in_flight_at_send", requests == 0 ? null : BenchFigures.round2(inFlightSum.get() / (double) requests));
  }
}
