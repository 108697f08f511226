package io.heteroflow.controlplane;

import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.store.BatchBindStore;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.controlplane.store.TenantStore;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.sqlclient.Pool;

/** What the control-plane verticles share in one process: the pool, the stores, the scheduler core, metrics. */
public record Services(Pool pool, SchedulerConfig config, TaskStore tasks, NodeStore nodes, TenantStore tenants,
                       PluginConfigStore plugins, BindStore binds, BatchBindStore batchBinds, LeaderStore leaders, Leadership leadership,
                       PluginRegistry registry, SchedulingPipeline pipeline, ControlPlaneMetrics metrics,
                       PrometheusMeterRegistry meterRegistry, String adminToken) {

  public static Services create(Pool pool, SchedulerConfig config, Leadership leadership,
                                PrometheusMeterRegistry meterRegistry, String adminToken) {
    BindStore binds = new BindStore(pool, config);
    return new Services(pool, config, new TaskStore(pool), new NodeStore(pool), new TenantStore(pool),
        new PluginConfigStore(pool), binds, new BatchBindStore(pool, config, binds), new LeaderStore(pool), leadership,
        BuiltInPlugins.registry(config), BuiltInPlugins.pipeline(config), new ControlPlaneMetrics(meterRegistry),
        meterRegistry, adminToken);
  }
}
