package io.heteroflow.controlplane.cluster;

import io.vertx.core.Future;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A leader-only pass that never overlaps itself: a request while one runs makes exactly one more run after it
 * (beats and kicks coalesce). Used on the verticle's event loop only, so it needs no locking.
 */
final class SerialPass {
  private static final Logger LOG = Logger.getLogger(SerialPass.class.getName());
  private final String name;
  private final Leadership leadership;
  private final Supplier<Future<?>> pass;
  private boolean running;
  private boolean again;

  SerialPass(String name, Leadership leadership, Supplier<Future<?>> pass) {
    this.name = name;
    this.leadership = leadership;
    this.pass = pass;
  }

  /** How many of {@code changes} took effect (true), once all have settled; failures count as none. */
  static Future<Integer> changed(java.util.List<Future<Boolean>> changes) {
    return Future.join(changes).transform(done -> Future.succeededFuture(
        (int) changes.stream().filter(each -> each.succeeded() && each.result()).count()));
  }

  void request() {
    if (!leadership.leading()) {
      return;
    }
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    Future<?> run;
    try {
      run = pass.get();
    } catch (RuntimeException e) {
      run = Future.failedFuture(e);
    }
    run.onComplete(done -> {
      running = false;
      if (done.failed()) {
        LOG.log(Level.FINE, name + " failed; the next beat retries", done.cause());
      }
      if (again) {
        request();
      }
    });
  }
}
