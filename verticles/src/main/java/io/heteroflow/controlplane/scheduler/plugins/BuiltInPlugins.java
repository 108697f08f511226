package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.builtin.AffinityFilter;
import io.heteroflow.controlplane.scheduler.builtin.AvailabilityFilter;
import io.heteroflow.controlplane.scheduler.builtin.ResourcePreFilter;
import io.heteroflow.controlplane.scheduler.builtin.TenantFilter;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.plugins.frag.FragmentationScore;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import io.heteroflow.controlplane.scheduler.plugins.nvlink.NvlinkPlugin;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** The plugins HeteroFlow ships (SPEC's eight, and frag), registered by name with the defaults of conf/config.yaml, and the pipeline. */
public final class BuiltInPlugins {
  private BuiltInPlugins() {}

  /** How many recent tasks the frag plugin learns the workload's mix of shapes from. */
  public static final int FRAG_WINDOW = 2000;

  public static PluginRegistry registry(SchedulerConfig config) {
    ShardPlacement shards = new ShardPlacement(config);
    PluginRegistry registry = new PluginRegistry();
    // filters run in registration order: the type match before capacity, so a reason names the first cause
    registry.register(GpuFilter.NAME, true, GpuFilter::new, null);
    registry.register(ResourceFilter.NAME, true, () -> new ResourceFilter(shards), null);
    register(registry, config, SpreadScore.NAME, SpreadScore::new);
    register(registry, config, BinpackScore.NAME, BinpackScore::new);
    register(registry, config, NvlinkPlugin.NAME, NvlinkPlugin::new);
    register(registry, config, TopologyScore.NAME, TopologyScore::new);
    register(registry, config, RdmaPlugin.NAME, RdmaPlugin::new);
    register(registry, config, PreemptPlugin.NAME, PreemptPlugin::new);
    // frag learns the workload's task shapes from the tasks it sees, across rounds (one mix per registry)
    TaskShapeMix learned = TaskShapeMix.learning(FRAG_WINDOW);
    register(registry, config, FragmentationScore.NAME, () -> new FragmentationScore(config, learned));
    return registry.mutuallyExclusive(BinpackScore.NAME, SpreadScore.NAME);
  }

  private static void register(PluginRegistry registry, SchedulerConfig config, String name, Supplier<Object> factory) {
    PluginConfig defaults = config.pluginDefaults().getOrDefault(name, new PluginConfig(name, false, 0, Map.of()));
    registry.register(name, false, factory, defaults);
  }

  /**
   * The built-in filter chain of SPEC §2.1 (availability → tenant → resource pre-filter → affinity), then the
   * plugins, then the load thresholds.
   */
  public static SchedulingPipeline pipeline(SchedulerConfig config) {
    return new SchedulingPipeline(
        List.of(new AvailabilityFilter(), new TenantFilter(), new ResourcePreFilter(config.maxInferencePerNode()),
            new AffinityFilter()),
        new FewestTasksCardPicker(), new ShardPlacement(config), config.loadThresholds());
  }
}
