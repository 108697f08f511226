package io.heteroflow.controlplane.scheduler.framework;

import java.util.Map;

/** One row of the effective plugin set, exactly as the scheduler uses it. */
public record PluginState(String name, PluginKind kind, boolean enabled, int weight, boolean locked,
                          Map<String, Object> extra) {
}
