package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.config.ApiConfig;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * A token bucket per API token (keyed by the token's digest, never the token), in this control plane's memory:
 * each bucket holds up to {@code burst} requests and refills at {@code requestsPerSecond}. A request that finds its
 * bucket empty is refused with the whole seconds until one request is available again (at least 1). Memory is
 * bounded: at most {@code maxTrackedTokens} buckets, the least recently used evicted first (an evicted token
 * starts again with a full bucket). Time comes from the injected clock, so a test drives it without sleeping.
 */
final class RateLimiter {
  private final ApiConfig.RateLimits limits;
  private final Clock clock;
  private final Map<String, Bucket> buckets;

  RateLimiter(ApiConfig.RateLimits limits, Clock clock) {
    this.limits = limits;
    this.clock = clock;
    int max = limits.maxTrackedTokens();
    this.buckets = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
        return size() > max;
      }
    };
  }

  ApiConfig.RateLimits limits() {
    return limits;
  }

  /** Takes one request from {@code key}'s bucket: empty when allowed, else the seconds to wait (Retry-After). */
  synchronized OptionalLong acquire(String key) {
    long now = clock.millis();
    Bucket bucket = buckets.computeIfAbsent(key, k -> new Bucket(limits.burst(), now));
    double refilled = Math.min(limits.burst(),
        bucket.available + Math.max(0, now - bucket.updatedAt) * limits.requestsPerSecond() / 1000.0);
    bucket.updatedAt = Math.max(bucket.updatedAt, now);
    if (refilled >= 1) {
      bucket.available = refilled - 1;
      return OptionalLong.empty();
    }
    bucket.available = refilled;
    return OptionalLong.of(Math.max(1, (long) Math.ceil((1 - refilled) / limits.requestsPerSecond())));
  }

  /** How many buckets are held now (bounded by {@code maxTrackedTokens}). */
  synchronized int tracked() {
    return buckets.size();
  }

  private static final class Bucket {
    private double available;
    private long updatedAt;

    private Bucket(double available, long updatedAt) {
      this.available = available;
      this.updatedAt = updatedAt;
    }
  }
}
