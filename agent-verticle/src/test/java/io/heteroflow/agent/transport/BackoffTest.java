package io.heteroflow.agent.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.message.FailureCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  void delaysGrowExponentiallyUpToTheCapWithJitterBetweenHalfAndAll() {
    Backoff backoff = new Backoff(100, 1_000, 50);
    assertEquals(50, backoff.delayMs(1, () -> 0.0));
    assertEquals(99, backoff.delayMs(1, () -> 0.999));
    assertEquals(200, backoff.delayMs(3, () -> 0.0), "the third repetition's bound is 400 ms");
    assertEquals(500, backoff.delayMs(5, () -> 0.0), "capped: 1600 ms becomes 1000");
    assertEquals(500, backoff.delayMs(70, () -> 0.0), "no overflow far past the cap");
    assertTrue(backoff.delayMs(70, () -> 0.999) <= 1_000);
  }

  @Test
  void aRefusalIsNeverRepeated() {
    AtomicInteger attempts = new AtomicInteger();
    Future<Object> result = new Backoff(1, 2, 10).run(vertx, attempt -> {
      attempts.incrementAndGet();
      return Future.failedFuture(FailureCode.NOT_FOUND.refusal("task_id: no task"));
    });
    assertEquals(FailureCode.NOT_FOUND, FailureCode.of(result.transform(Future::succeededFuture).await().cause()));
    assertEquals(1, attempts.get(), "a 4xx is the sender's fault: one attempt only");
  }

  @Test
  void anUnavailableOrUnansweredRequestIsRepeatedUntilItSucceedsWithTheAttemptNumber() {
    AtomicInteger attempts = new AtomicInteger();
    String result = new Backoff(1, 4, 10).run(vertx, attempt -> {
      assertEquals(attempts.getAndIncrement(), attempt);
      return switch (attempt) {
        case 0 -> Future.failedFuture(FailureCode.UNAVAILABLE.refusal("PostgreSQL unreachable"));
        case 1 -> Future.failedFuture(new ReplyException(ReplyFailure.TIMEOUT, "timed out"));
        case 2 -> Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, "no control plane yet"));
        default -> Future.succeededFuture("answered at attempt " + attempt);
      };
    }).await();
    assertEquals("answered at attempt 3", result);
  }

  @Test
  void itGivesUpAfterMaxAttempts() {
    AtomicInteger attempts = new AtomicInteger();
    Future<Object> result = new Backoff(1, 2, 4).run(vertx, attempt -> {
      attempts.incrementAndGet();
      return Future.failedFuture(FailureCode.UNAVAILABLE.refusal("down"));
    });
    assertTrue(result.transform(Future::succeededFuture).await().failed());
    assertEquals(4, attempts.get());
  }
}
