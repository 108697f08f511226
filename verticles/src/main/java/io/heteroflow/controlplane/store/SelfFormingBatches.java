package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Writes in batches that form by themselves: an item arriving while a write is in flight waits and goes with
 * the next one, so a lone item is written at once and a flood becomes a few large transactions. A batch holds
 * at most one item per {@code key} (a later one waits for the next batch), and each item gets its own answer
 * from {@code write}, which answers one future per item, in order (an item may fail alone).
 */
final class SelfFormingBatches<T, R> {
  private record Pending<T, R>(T item, Promise<R> answer) {
  }

  private final Function<T, Object> key;
  private final Function<List<T>, Future<List<Future<R>>>> write;
  private List<Pending<T, R>> queue = new ArrayList<>();
  private boolean writing;

  SelfFormingBatches(Function<T, Object> key, Function<List<T>, Future<List<Future<R>>>> write) {
    this.key = key;
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
        (keys.add(key.apply(pending.item())) ? batch : later).add(pending);
      }
      queue = later;
      if (batch.isEmpty()) {
        writing = false;
        return;
      }
    }
    write.apply(batch.stream().map(Pending::item).toList()).onComplete(result -> {
      for (int i = 0; i < batch.size(); i++) {
        Promise<R> answer = batch.get(i).answer();
        Future<R> own = result.succeeded() ? result.result().get(i) : Future.failedFuture(result.cause());
        own.onComplete(answer::complete, answer::fail);
      }
      writeNext();
    });
  }
}
