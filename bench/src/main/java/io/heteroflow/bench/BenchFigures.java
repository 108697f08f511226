package io.heteroflow.bench;

/** The benchmark's arithmetic on figures: seconds from nanoseconds, quantiles of sorted samples, rounding. */
final class BenchFigures {
  private BenchFigures() {}

  static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[(int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  }

  static double seconds(long nanos) {
    return nanos / 1e9;
  }

  static Double round1(double value) {
    return Double.isFinite(value) ? Math.round(value * 10) / 10.0 : null;
  }

  static Double round2(double value) {
    return Double.isFinite(value) ? Math.round(value * 100) / 100.0 : null;
  }

  static Double round3(double value) {
    return Double.isFinite(value) ? Math.round(value * 1000) / 1000.0 : null;
  }
}
