package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.builtin.AffinityFilter;
import io.heteroflow.controlplane.scheduler.builtin.AvailabilityFilter;
import io.heteroflow.controlplane.scheduler.builtin.ReservationFilter;
import io.heteroflow.controlplane.scheduler.builtin.ResourcePreFilter;
import io.heteroflow.controlplane.scheduler.builtin.TenantFilter;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.plugins.frag.FragmentationScore;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import io.heteroflow.controlplane.scheduler.plugins.nvlink.NvlinkPlugin;

/**
 * Every plugin HeteroFlow ships, in filter order: the locked filters (SPEC §2.1's built-in chain — availability →
 * tenant → resource pre-filter → affinity — then gpu-filter and resource-filter, then the reservation filter, so a
 * reason names the first cause), then SPEC's switchable plugins and frag with the defaults of conf/config.yaml. Adding a plugin is one
 * line here and its own file (with its {@link PluginDefinition}).
 */
public final class BuiltInPlugins {
  private BuiltInPlugins() {}

  /** How many recent tasks the frag plugin learns the workload's mix of shapes from. */
  public static final int FRAG_WINDOW = 2000;

  public static PluginRegistry registry(SchedulerConfig config) {
    // frag learns the workload's task shapes from the tasks it sees, across rounds (one mix per registry)
    return registry(config, TaskShapeMix.learning(FRAG_WINDOW));
  }

  /** The registry with frag scoring against {@code fragMix} (the simulator gives the trace's own mix). */
  public static PluginRegistry registry(SchedulerConfig config, TaskShapeMix fragMix) {
    PluginRegistry registry = new PluginRegistry(config)
        .registerLocked(AvailabilityFilter.DEFINITION)
        .registerLocked(TenantFilter.DEFINITION)
        .registerLocked(ResourcePreFilter.DEFINITION)
        .registerLocked(AffinityFilter.DEFINITION)
        .registerLocked(GpuFilter.DEFINITION)
        .registerLocked(ResourceFilter.DEFINITION)
        .registerLocked(ReservationFilter.DEFINITION);
    register(registry, config, SpreadScore.DEFINITION);
    register(registry, config, BinpackScore.DEFINITION);
    register(registry, config, NvlinkPlugin.DEFINITION);
    register(registry, config, TopologyScore.DEFINITION);
    register(registry, config, RdmaPlugin.DEFINITION);
    register(registry, config, PreemptPlugin.DEFINITION);
    register(registry, config, FragmentationScore.definition(fragMix));
    register(registry, config, ReplicaSpreadScore.DEFINITION);
    return registry.mutuallyExclusive(BinpackScore.NAME, SpreadScore.NAME);
  }

  /** A switchable plugin with its defaults from conf/config.yaml (absent there: off, weight 0). */
  public static void register(PluginRegistry registry, SchedulerConfig config, PluginDefinition definition) {
    registry.register(definition, config.pluginDefaults().get(definition.name()));
  }

  /**
   * The pipeline: the filters come with the plugin set (the locked ones first), then the load thresholds; the
   * default card picking and shard placement when no enabled plugin does either.
   */
  public static SchedulingPipeline pipeline(SchedulerConfig config) {
    return new SchedulingPipeline(new FewestTasksCardPicker(), new ShardPlacement(config), config.loadThresholds());
  }
}
