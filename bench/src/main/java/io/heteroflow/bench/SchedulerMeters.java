package io.heteroflow.bench;

import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;

/** Readings of the control plane's meters: one counter, and the scheduling attempts by result and reason. */
final class SchedulerMeters {
  private SchedulerMeters() {}

  static double counter(PrometheusMeterRegistry registry, String name) {
    Counter counter = registry.find(name).counter();
    return counter == null ? 0 : counter.count();
  }

  static Map<String, Double> attempts(PrometheusMeterRegistry registry) {
    Map<String, Double> counts = new LinkedHashMap<>();
    registry.find("heteroflow_scheduling_attempts").counters().forEach(counter -> counts.put(
        counter.getId().getTag("result") + "/" + counter.getId().getTag("reason"), counter.count()));
    return counts;
  }

  static Map<String, Double> attemptsSince(PrometheusMeterRegistry registry, Map<String, Double> before) {
    Map<String, Double> delta = new LinkedHashMap<>();
    attempts(registry).forEach((key, value) -> {
      double spent = value - before.getOrDefault(key, 0.0);
      if (spent > 0) {
        delta.put(key, (double) Math.round(spent));
      }
    });
    return delta;
  }
}
