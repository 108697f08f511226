package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Writes in batches that form by themselves: an item arriving while a write is in flight waits and goes with
 * the next one, so a lone item is written at once and a flood becomes a few large transactions. A batch holds
 * at most {@code maxBatch} items and, when {@code key} is given, at most one item per key (a later one waits for
 * the next batch).
 * {@code write} answers one future per item, in order, so each item keeps its own answer (an item may fail
 * alone). Whatever a write does (throws, fails, answers the wrong number of items), every item of its batch
 * is answered and the next batch starts: one bad write never stalls the items behind it.
 */
final class SelfFormingBatches<T, R> {
  private static final Logger LOG = Logger.getLogger(SelfFormingBatches.class.getName());

  private record Pending<T, R>(T item, Promise<R> answer) {
  }

  private final Function<T, Object> key;
  private final int maxBatch;
  private final Function<List<T>, Future<List<Future<R>>>> write;
  private List<Pending<T, R>> queue = new ArrayList<>();
  private boolean writing;

  SelfFormingBatches(Function<T, Object> key, int maxBatch, Function<List<T>, Future<List<Future<R>>>> write) {
    this.key = key;
    this.maxBatch = maxBatch;
    this.write = write;
  }

  Future<R> submit(T item) {
    Promise<R> answer = Promise.promise();
    synchronized (this) {
      queue.add(new Pending<>(item, answer));
      if (writing) {
        return answer.future();
      }
      writing = true;
    }
    writeNext();
    return answer.future();
  }

  private void writeNext() {
    List<Pending<T, R>> batch = new ArrayList<>();
    synchronized (this) {
      Set<Object> keys = new HashSet<>();
      List<Pending<T, R>> later = new ArrayList<>();
      for (Pending<T, R> pending : queue) {
        (batch.size() < maxBatch && (key == null || keys.add(key.apply(pending.item()))) ? batch : later).add(pending);
      }
      queue = later;
      if (batch.isEmpty()) {
        writing = false;
        return;
      }
    }
    Future<List<Future<R>>> written;
    try {
      written = write.apply(batch.stream().map(Pending::item).toList());
    } catch (RuntimeException e) {
      written = Future.failedFuture(e);
    }
    written.onComplete(result -> {
      try {
        for (int i = 0; i < batch.size(); i++) {
          Promise<R> answer = batch.get(i).answer();
          Future<R> own = result.failed() ? Future.failedFuture(result.cause())
              : i < result.result().size() ? result.result().get(i)
              : Future.failedFuture(new IllegalStateException("the batch write answered no result for this item"));
          own.onComplete(answer::tryComplete, answer::tryFail);
        }
      } catch (RuntimeException e) {
        LOG.log(Level.SEVERE, "answering a batch failed", e);
        batch.forEach(pending -> pending.answer().tryFail(e));
      } finally {
        writeNext();
      }
    });
  }
}
