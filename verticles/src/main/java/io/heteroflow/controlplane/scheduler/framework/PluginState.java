package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;

/**
 * One row of the effective plugin set, exactly as the scheduler uses it; {@code kind} lists the extension
 * points the plugin implements ("filter", "score+filter+bind", "config", …), {@code extra} the value of each of
 * its settings and {@code settings} their schema.
 */
public record PluginState(String name, String kind, boolean enabled, int weight, boolean locked,
                          Map<String, Object> extra, List<PluginSetting> settings) {
  public PluginState {
    extra = Map.copyOf(extra);
    settings = List.copyOf(settings);
  }
}
