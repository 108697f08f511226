package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.Map;

/**
 * Built-in filter 4 (SPEC §2.1): every {@code node_selector} entry equals a node label, and when the task
 * lists allowed card models ({@code gpu_model}) the node has at least one card of one of them.
 */
public final class AffinityFilter implements FilterPlugin {
  public static final String NAME = "affinity";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, AffinityFilter::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    for (Map.Entry<String, String> wanted : task.nodeSelector().entrySet()) {
      if (!wanted.getValue().equals(node.labels().get(wanted.getKey()))) {
        return Status.reject(name(), ReasonCode.NoSchedulableNodes, "not matching node_selector");
      }
    }
    if (!task.gpuModels().isEmpty() && !node.cards().isEmpty()) {
      boolean anyAllowed = false;
      for (CardInfo card : node.cards()) {
        anyAllowed |= task.gpuModels().stream().anyMatch(model -> model.equalsIgnoreCase(card.model()));
      }
      if (!anyAllowed) {
        return Status.reject(name(), ReasonCode.GPUTypeUnavailable, "without an allowed gpu_model");
      }
    }
    return Status.ok();
  }
}
