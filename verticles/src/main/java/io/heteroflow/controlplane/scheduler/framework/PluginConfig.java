package io.heteroflow.controlplane.scheduler.framework;

import java.util.Map;

/** The persisted switch, weight and extra settings of one plugin. */
public record PluginConfig(String name, boolean enabled, int weight, Map<String, Object> extra) {
  public PluginConfig {
    extra = extra == null ? Map.of() : Map.copyOf(extra);
  }
}
