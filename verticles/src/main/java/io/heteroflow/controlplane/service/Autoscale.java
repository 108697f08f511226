package io.heteroflow.controlplane.service;

import io.vertx.core.json.JsonObject;

/**
 * A service's autoscaling bounds and target (SPEC §9, issue 17): every decision the mean GPU utilisation of its
 * cards over the last minute above {@code target + 10} points adds one replica, below {@code target - 20} removes
 * the newest, always within {@code [min, max]}.
 */
public record Autoscale(int min, int max, int targetPercent) {
  public static final int UP_MARGIN = 10;
  public static final int DOWN_MARGIN = 20;

  /** The replica count the autoscaler wants from {@code current} at {@code meanPercent}; {@code current} for none. */
  public int decide(int current, double meanPercent) {
    if (meanPercent > targetPercent + UP_MARGIN && current < max) {
      return current + 1;
    }
    if (meanPercent < targetPercent - DOWN_MARGIN && current > min) {
      return current - 1;
    }
    return Math.max(min, Math.min(max, current));
  }

  public JsonObject toJson() {
    return new JsonObject().put("min", min).put("max", max).put("target_gpu_utilization_percent", targetPercent);
  }

  public static Autoscale fromJson(JsonObject json) {
    return json == null ? null : new Autoscale(json.getInteger("min"), json.getInteger("max"),
        json.getInteger("target_gpu_utilization_percent"));
  }
}
