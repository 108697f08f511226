package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.builtin.AffinityFilter;
import io.heteroflow.controlplane.scheduler.builtin.AvailabilityFilter;
import io.heteroflow.controlplane.scheduler.builtin.TenantFilter;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginKind;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import java.util.List;
import java.util.Map;

/** The plugins HeteroFlow ships, registered by name with their SPEC §12 defaults, and the pipeline around them. */
public final class BuiltInPlugins {
  private BuiltInPlugins() {}

  public static PluginRegistry registry() {
    return new PluginRegistry()
        // filters run in registration order: the type match before capacity, so reasons name the first cause
        .register(GpuFilter.NAME, PluginKind.FILTER, true, GpuFilter::new,
            new PluginConfig(GpuFilter.NAME, true, 0, Map.of()))
        .register(ResourceFilter.NAME, PluginKind.FILTER, true, ResourceFilter::new,
            new PluginConfig(ResourceFilter.NAME, true, 0, Map.of()))
        .register(SpreadScore.NAME, PluginKind.SCORE, false, SpreadScore::new,
            new PluginConfig(SpreadScore.NAME, true, 1, Map.of()))
        .register(BinpackScore.NAME, PluginKind.SCORE, false, BinpackScore::new,
            new PluginConfig(BinpackScore.NAME, false, 0, Map.of()))
        .mutuallyExclusive(BinpackScore.NAME, SpreadScore.NAME);
  }

  /** Built-in filter chain of SPEC §2.1 (availability → tenant → affinity), then the plugins. */
  public static SchedulingPipeline pipeline() {
    return new SchedulingPipeline(List.of(new AvailabilityFilter(), new TenantFilter(), new AffinityFilter()),
        new LowestIndexCardPicker());
  }
}
