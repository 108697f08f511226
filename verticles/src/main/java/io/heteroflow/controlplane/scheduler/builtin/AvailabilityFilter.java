package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** Built-in filter 1 (SPEC §2.1): the node is online or busy, not cordoned by an admin, and able to execute tasks. */
public final class AvailabilityFilter implements FilterPlugin {
  public static final String NAME = "availability";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, AvailabilityFilter::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (!"online".equals(node.status()) && !"busy".equals(node.status())) {
      return Status.reject(name(), ReasonCode.NoSchedulableNodes, node.status());
    }
    if (node.cordoned()) {
      return Status.reject(name(), ReasonCode.NoSchedulableNodes, "cordoned");
    }
    if (!node.executable()) {
      return Status.reject(name(), ReasonCode.NoSchedulableNodes, "not executable");
    }
    return Status.ok();
  }
}
