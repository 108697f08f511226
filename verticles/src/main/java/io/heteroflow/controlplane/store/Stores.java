package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.vertx.sqlclient.Pool;

/**
 * The PostgreSQL stores of one control plane, all on one pool: built once by the composition root
 * (ControlPlane), which hands each verticle and route class only the stores it uses. Programs that drive a
 * running control plane from outside (tests, the benchmark) read them from {@code ControlPlane.Running}.
 */
public record Stores(Pool pool, TaskStore tasks, NodeStore nodes, TenantStore tenants, PluginConfigStore plugins,
                     BindStore binds, BatchBindStore batchBinds, LeaderStore leaders,
                     PreemptionStore preemptions, GroupStore groups, QueueStore queues, PlanStore plans,
                     ServiceStore services, TokenStore tokens, AuditStore audit) {

  public static Stores on(Pool pool, SchedulerConfig config) {
    return on(pool, config, null);
  }

  /** The stores of control plane {@code memberId}: heartbeats and beats record that they came through it. */
  public static Stores on(Pool pool, SchedulerConfig config, String memberId) {
    BindStore binds = new BindStore(pool, config);
    BatchBindStore batchBinds = new BatchBindStore(pool, config, binds);
    return new Stores(pool, new TaskStore(pool), new NodeStore(pool, memberId), new TenantStore(pool),
        new PluginConfigStore(pool), binds, batchBinds, new LeaderStore(pool), new PreemptionStore(pool),
        new GroupStore(pool, batchBinds), new QueueStore(pool), new PlanStore(pool),
        new ServiceStore(pool), new TokenStore(pool), new AuditStore(pool));
  }
}
