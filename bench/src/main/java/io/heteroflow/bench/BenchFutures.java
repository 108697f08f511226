package io.heteroflow.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/** Vert.x futures as the benchmark's thread uses them: awaited (120 s at most), or run over a list, a few at a time. */
final class BenchFutures {
  private BenchFutures() {}

  /** The result, or the future's own failure thrown as it is; a TimeoutException after 120 s. */
  static <T> T await(Future<T> future) throws TimeoutException {
    return future.await(120, TimeUnit.SECONDS);
  }

  /** Runs {@code action} over {@code items} with at most {@code parallel} in flight. */
  static <T> Future<Void> forEachLimited(List<T> items, int parallel, Function<T, Future<?>> action) {
    AtomicInteger next = new AtomicInteger();
    List<Future<Void>> workers = new ArrayList<>();
    for (int w = 0; w < Math.min(parallel, items.size()); w++) {
      Promise<Void> done = Promise.promise();
      step(items, next, action, done);
      workers.add(done.future());
    }
    return Future.all(workers).mapEmpty();
  }

  private static <T> void step(List<T> items, AtomicInteger next, Function<T, Future<?>> action, Promise<Void> done) {
    int i = next.getAndIncrement();
    if (i >= items.size()) {
      done.tryComplete();
      return;
    }
    action.apply(items.get(i)).onSuccess(v -> step(items, next, action, done)).onFailure(done::tryFail);
  }
}
