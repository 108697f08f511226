package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.config.ApiConfig;
import io.heteroflow.testsupport.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** The token bucket, driven by a clock the test sets: no sleeping. */
class RateLimiterTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

  private RateLimiter limiter(double perSecond, int burst, int maxTracked) {
    return new RateLimiter(new ApiConfig.RateLimits(true, perSecond, burst, true, maxTracked), clock);
  }

  @Test
  void aBurstIsAllowedThenRefusedWithWholeSecondsUntilTheNextRequest() {
    RateLimiter limiter = limiter(2, 3, 10);
    for (int i = 0; i < 3; i++) {
      assertTrue(limiter.acquire("a").isEmpty(), "request " + i + " of the burst");
    }
    assertEquals(OptionalLong.of(1), limiter.acquire("a"), "half a second at 2/s, rounded up to 1");
    clock.set(clock.instant().plusMillis(499));
    assertEquals(OptionalLong.of(1), limiter.acquire("a"));
    clock.set(clock.instant().plusMillis(1));
    assertTrue(limiter.acquire("a").isEmpty(), "one request refilled after 500 ms");
    assertEquals(OptionalLong.of(1), limiter.acquire("a"));
  }

  @Test
  void retryAfterCountsTheWholeWaitAtSlowRates() {
    RateLimiter limiter = limiter(0.1, 1, 10);
    assertTrue(limiter.acquire("a").isEmpty());
    assertEquals(OptionalLong.of(10), limiter.acquire("a"));
    clock.set(clock.instant().plus(Duration.ofSeconds(4)));
    assertEquals(OptionalLong.of(6), limiter.acquire("a"));
    clock.set(clock.instant().plus(Duration.ofSeconds(6)));
    assertTrue(limiter.acquire("a").isEmpty());
  }

  @Test
  void eachTokenHasItsOwnBucketAndARefillNeverExceedsTheBurst() {
    RateLimiter limiter = limiter(1, 2, 10);
    assertTrue(limiter.acquire("a").isEmpty());
    assertTrue(limiter.acquire("a").isEmpty());
    assertTrue(limiter.acquire("a").isPresent());
    assertTrue(limiter.acquire("b").isEmpty(), "b is not limited by a");
    clock.set(clock.instant().plus(Duration.ofHours(1)));
    assertTrue(limiter.acquire("a").isEmpty());
    assertTrue(limiter.acquire("a").isEmpty());
    assertTrue(limiter.acquire("a").isPresent(), "an hour idle refills to the burst, not beyond");
  }

  @Test
  void memoryIsBoundedByEvictingTheLeastRecentlyUsedBucket() {
    RateLimiter limiter = limiter(1, 1, 3);
    for (int i = 0; i < 1000; i++) {
      limiter.acquire("token-" + i);
    }
    assertEquals(3, limiter.tracked());
    assertTrue(limiter.acquire("token-999").isPresent(), "a recent bucket is kept (still empty)");
  }

  @Test
  void badSettingsNameTheField() {
    IllegalArgumentException error = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> new ApiConfig.RateLimits(true, 0, 10, true, 10));
    assertTrue(error.getMessage().contains("api.rate_limits.requests_per_second"), error.getMessage());
    error = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> new ApiConfig.RateLimits(true, 1, 0, true, 10));
    assertTrue(error.getMessage().contains("api.rate_limits.burst"), error.getMessage());
  }
}
