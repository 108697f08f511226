package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * {@code gpu-filter} (SPEC §3), locked on: a task that declares {@code gpu_type} passes only nodes whose GPU
 * vendor equals it, case-insensitively. No {@code gpu_type} passes every node; a node that has not yet
 * reported its GPUs passes (the bind-time re-check is the safety net).
 */
public final class GpuFilter implements FilterPlugin {
  public static final String NAME = "gpu-filter";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, GpuFilter::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (task.gpuType() == null || node.gpuVendor() == null) {
      return Status.ok();
    }
    if (!task.gpuType().equalsIgnoreCase(node.gpuVendor())) {
      return Status.reject(NAME, ReasonCode.GPUTypeUnavailable, "not " + task.gpuType());
    }
    return Status.ok();
  }
}
