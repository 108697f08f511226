package io.heteroflow.controlplane.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Batches form while a write is in flight, respect their size and key limits, and a write that throws,
 * fails or answers too few items fails only its own batch: the items behind it are still written.
 */
class SelfFormingBatchesTest {
  private final List<List<String>> written = new ArrayList<>();
  private final List<Promise<List<Future<String>>>> inFlight = new ArrayList<>();

  private Future<List<Future<String>>> held(List<String> items) {
    written.add(items);
    Promise<List<Future<String>>> promise = Promise.promise();
    inFlight.add(promise);
    return promise.future();
  }

  private static List<Future<String>> echo(List<String> items) {
    return items.stream().map(item -> Future.succeededFuture(item.toUpperCase())).toList();
  }

  @Test
  void itemsArrivingDuringAWriteGoTogetherWithinTheLimits() {
    SelfFormingBatches<String, String> batches = new SelfFormingBatches<>(item -> item.charAt(0), 3, this::held);
    Future<String> first = batches.submit("a1");
    List<Future<String>> waiting = List.of("b1", "c1", "b2", "d1", "e1").stream().map(batches::submit).toList();
    assertEquals(List.of(List.of("a1")), written, "a lone item is written at once");
    inFlight.get(0).complete(echo(written.get(0)));
    assertEquals("A1", first.result());
    assertEquals(List.of("b1", "c1", "d1"), written.get(1), "at most 3 per batch, one per key");
    inFlight.get(1).complete(echo(written.get(1)));
    assertEquals(List.of("b2", "e1"), written.get(2));
    inFlight.get(2).complete(echo(written.get(2)));
    assertEquals(List.of("B1", "C1", "B2", "D1", "E1"), waiting.stream().map(Future::result).toList());
  }

  @Test
  void aWriteThatThrowsFailsOrAnswersTooLittleDoesNotStallTheItemsBehindIt() {
    int[] calls = {0};
    SelfFormingBatches<String, String> batches = new SelfFormingBatches<>(null, 100, items -> {
      calls[0]++;
      if (items.contains("throws")) {
        throw new IllegalStateException("boom");
      }
      if (items.contains("fails")) {
        return Future.failedFuture("refused");
      }
      if (items.contains("short")) {
        return Future.succeededFuture(List.of());
      }
      return Future.succeededFuture(echo(items));
    });
    Future<String> thrown = batches.submit("throws");
    Future<String> failed = batches.submit("fails");
    Future<String> shortAnswer = batches.submit("short");
    Future<String> fine = batches.submit("fine");
    assertTrue(thrown.failed() && failed.failed() && shortAnswer.failed());
    assertEquals("refused", failed.cause().getMessage());
    assertEquals("FINE", fine.result());
    assertEquals(4, calls[0], "each item was written alone, none was dropped");
  }
}
