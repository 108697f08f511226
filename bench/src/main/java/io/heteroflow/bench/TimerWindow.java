package io.heteroflow.bench;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.util.concurrent.TimeUnit;

/**
 * A control-plane timer (e.g. {@code heteroflow_round_duration}, a percentile histogram) between two instants:
 * the difference of two histogram snapshots, so only what happened in the window counts; percentiles are
 * interpolated linearly inside the histogram bucket that holds them (Micrometer's buckets are ~10-30 % wide).
 */
final class TimerWindow {
  private final MeterRegistry registry;
  private final String name;
  /** Null when the timer did not exist yet at the window's start (it is registered at its first record). */
  private final HistogramSnapshot before;

  private TimerWindow(MeterRegistry registry, String name) {
    this.registry = registry;
    this.name = name;
    Timer timer = registry.find(name).timer();
    this.before = timer == null ? null : timer.takeSnapshot();
  }

  static TimerWindow open(MeterRegistry registry, String name) {
    return new TimerWindow(registry, name);
  }

  /** Count, total, p50 and p99 (ms) of what the timer recorded since {@link #open}. */
  record Stats(long count, double totalMs, double p50Ms, double p99Ms) {
    double meanMs() {
      return count == 0 ? Double.NaN : totalMs / count;
    }
  }

  Stats close() {
    Timer timer = registry.find(name).timer();
    if (timer == null) {
      return new Stats(0, 0, Double.NaN, Double.NaN);
    }
    HistogramSnapshot after = timer.takeSnapshot();
    long count = after.count() - (before == null ? 0 : before.count());
    double totalMs = after.total(TimeUnit.MILLISECONDS) - (before == null ? 0 : before.total(TimeUnit.MILLISECONDS));
    CountAtBucket[] end = after.histogramCounts();
    CountAtBucket[] start = before == null ? new CountAtBucket[0] : before.histogramCounts();
    double[] bounds = new double[end.length];
    double[] cumulative = new double[end.length];
    for (int i = 0; i < end.length; i++) {
      bounds[i] = end[i].bucket(TimeUnit.MILLISECONDS);
      cumulative[i] = end[i].count() - (i < start.length ? start[i].count() : 0);
    }
    return new Stats(count, totalMs, percentile(bounds, cumulative, count, 0.50),
        percentile(bounds, cumulative, count, 0.99));
  }

  /** From cumulative bucket counts (Micrometer's histogram counts are cumulative, bucket = upper bound). */
  static double percentile(double[] bounds, double[] cumulative, long count, double quantile) {
    if (count <= 0 || bounds.length == 0) {
      return Double.NaN;
    }
    double rank = quantile * count;
    double lowerBound = 0;
    double lowerCount = 0;
    for (int i = 0; i < bounds.length; i++) {
      if (cumulative[i] >= rank) {
        double inBucket = cumulative[i] - lowerCount;
        double fraction = inBucket <= 0 ? 1 : (rank - lowerCount) / inBucket;
        return lowerBound + fraction * (bounds[i] - lowerBound);
      }
      lowerBound = bounds[i];
      lowerCount = cumulative[i];
    }
    return bounds[bounds.length - 1]; // beyond the last bucket: report its bound as a floor
  }
}
