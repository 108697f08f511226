package io.heteroflow.agent.transport;

import io.heteroflow.protocol.message.FailureCode;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.function.DoubleSupplier;
import java.util.function.IntFunction;

/**
 * How the agent repeats a request the control plane did not answer: only a failure that repeating may fix
 * ({@link FailureCode#retryable}: 503, 500, a timeout, no receiver yet) is retried, never a 4xx refusal; the
 * delays grow exponentially from {@code baseMs} up to {@code capMs}, each drawn at random between half and all of
 * that bound ("equal jitter"), so thousands of agents that lost the control plane at once do not retry in step.
 */
public record Backoff(long baseMs, long capMs, int maxAttempts) {
  /** A claim: a task's start waits on it, so a short cap (15 attempts are about a minute). */
  public static final Backoff CLAIM = new Backoff(250, 5_000, 15);
  /** A report: the result must arrive, so many attempts (100 are about 45 minutes at the cap). */
  public static final Backoff REPORT = new Backoff(500, 30_000, 100);

  public Backoff {
    if (baseMs <= 0 || capMs < baseMs || maxAttempts < 1) {
      throw new IllegalArgumentException("a back-off needs 0 < base <= cap and at least one attempt");
    }
  }

  /** The delay before attempt {@code retry} + 1 (retry 1 is the first repetition), with {@code random} in [0, 1). */
  public long delayMs(int retry, DoubleSupplier random) {
    long bound = (long) Math.min(capMs, baseMs * Math.pow(2, Math.max(0, retry - 1)));
    return bound / 2 + (long) (random.getAsDouble() * (bound - bound / 2));
  }

  /**
   * Runs {@code attempt} (given the attempt's number, 0 first) until it succeeds, fails with a failure not worth
   * repeating, or {@code maxAttempts} have failed; the future fails with the last failure.
   */
  public <T> Future<T> run(Vertx vertx, IntFunction<Future<T>> attempt) {
    Promise<T> result = Promise.promise();
    next(vertx, attempt, 0, result);
    return result.future();
  }

  private <T> void next(Vertx vertx, IntFunction<Future<T>> attempt, int number, Promise<T> result) {
    attempt.apply(number).onSuccess(result::complete).onFailure(failure -> {
      if (number + 1 >= maxAttempts || !FailureCode.of(failure).retryable()) {
        result.fail(failure);
      } else {
        vertx.setTimer(Math.max(1, delayMs(number + 1, Math::random)), id -> next(vertx, attempt, number + 1, result));
      }
    });
  }
}
