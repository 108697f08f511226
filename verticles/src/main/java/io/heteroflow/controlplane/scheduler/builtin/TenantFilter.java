package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** Built-in filter 2 (SPEC §2.1): a dedicated node is visible only to its owning tenant. */
public final class TenantFilter implements FilterPlugin {
  public static final String NAME = "tenant";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, TenantFilter::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (node.dedicatedTenant() != null && !node.dedicatedTenant().equals(task.tenant())) {
      return Status.reject(name(), ReasonCode.NoSchedulableNodes, "dedicated to another tenant");
    }
    return Status.ok();
  }
}
