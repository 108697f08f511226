package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** Built-in filter 1 (SPEC §2.1): the node is online or busy, not cordoned by an admin, and able to execute tasks. */
public final class AvailabilityFilter implements FilterPlugin {
  @Override
  public String name() {
    return "availability";
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot) {
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
