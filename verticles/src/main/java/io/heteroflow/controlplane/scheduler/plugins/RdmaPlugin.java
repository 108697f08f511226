package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * {@code rdma} (SPEC §4.3), from node labels {@code rdma: true|false} and {@code rdma-speed: <Gbps>}. Score: no
 * label 50; {@code true} 70 + speed / 10 (bonus at most +30); explicitly {@code false} 40. A task labelled
 * {@code rdma: required} drops only nodes that explicitly lack RDMA (unknown is not a hard no).
 */
public final class RdmaPlugin implements ScorePlugin, FilterPlugin {
  public static final String NAME = "rdma";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, RdmaPlugin::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if ("required".equalsIgnoreCase(task.label("rdma")) && "false".equalsIgnoreCase(node.labels().get("rdma"))) {
      return Status.reject(NAME, ReasonCode.RDMAUnavailable, "without RDMA");
    }
    return Status.ok();
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    String rdma = node.labels().get("rdma");
    if ("true".equalsIgnoreCase(rdma)) {
      return 70 + (int) Math.min(30, speedGbps(node.labels().get("rdma-speed")) / 10);
    }
    return "false".equalsIgnoreCase(rdma) ? 40 : 50;
  }

  private static double speedGbps(String label) {
    if (label == null) {
      return 0;
    }
    try {
      return Math.max(0, Double.parseDouble(label.trim()));
    } catch (NumberFormatException unreadable) {
      return 0;
    }
  }
}
