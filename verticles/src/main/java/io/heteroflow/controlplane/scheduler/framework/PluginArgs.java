package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.controlplane.config.SchedulerConfig;
import java.util.Map;

/**
 * What a plugin's factory is built from: its settings, already validated against its schema with every default
 * filled in (so {@link #integer} and friends never see a missing or mistyped value), and the scheduler's
 * configuration (card reserves, caps, thresholds).
 */
public record PluginArgs(Map<String, Object> settings, SchedulerConfig config) {
  public PluginArgs {
    settings = Map.copyOf(settings);
  }

  public long integer(String name) {
    return (Long) require(name);
  }

  public double decimal(String name) {
    return (Double) require(name);
  }

  public boolean bool(String name) {
    return (Boolean) require(name);
  }

  public String string(String name) {
    return (String) require(name);
  }

  private Object require(String name) {
    Object value = settings.get(name);
    if (value == null) {
      throw new IllegalStateException("no setting '" + name + "' declared in the plugin's schema");
    }
    return value;
  }
}
