package io.heteroflow.controlplane.scheduler.plugins.nvlink;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.BindPlugin;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.FewestTasksCardPicker;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code nvlink} (SPEC §4.2): score, filter and card picking inside a node from its NVLink domains.
 * Score of the best card group: inside one domain +50, that domain exactly used up +30, all its cards free
 * +40, forced across domains −20; same NUMA +15, across NUMA −10; clamped to [0, 100]. No NVLink hardware or
 * no data: 50, filter passes, cards by the default picker. {@code nvlink: required} drops nodes whose NVLink
 * data shows no domain with enough free cards (a PCIe-only node is a set of single-card domains).
 */
public final class NvlinkPlugin implements ScorePlugin, FilterPlugin, BindPlugin {
  public static final String NAME = "nvlink";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, NvlinkPlugin::new);
  public static final String TOPOLOGY_LABEL = "heteroflow.io/gpu-topology";
  static final int NEUTRAL = 50;
  private final BindPlugin fallback = new FewestTasksCardPicker();

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (!"required".equalsIgnoreCase(task.label("nvlink")) || task.gpuRequired() <= 1) {
      return Status.ok();
    }
    NvlinkTopology topology = topologyOf(node);
    if (topology == null) {
      return Status.ok();
    }
    CardGroup group = CardGroup.best(topology, free(task, node), task.gpuRequired());
    if (group == null || !group.insideOneDomain()) {
      return Status.reject(NAME, ReasonCode.NVLinkDomainUnavailable,
          "without " + task.gpuRequired() + " free NVLink-connected cards");
    }
    return Status.ok();
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    NvlinkTopology topology = topologyOf(node);
    if (topology == null || !topology.hasLinks() || task.gpuRequired() == 0) {
      return NEUTRAL;
    }
    CardGroup group = CardGroup.best(topology, free(task, node), task.gpuRequired());
    if (group == null) {
      return NEUTRAL;
    }
    int score = group.insideOneDomain() ? 50 : -20;
    score += group.domainExactlyUsed() ? 30 : 0;
    score += group.domainAllFree() ? 40 : 0;
    if (group.sameNuma() != null) {
      score += group.sameNuma() ? 15 : -10;
    }
    return Math.max(0, Math.min(100, score));
  }

  @Override
  public List<Integer> pickCards(TaskRequest task, NodeInfo node, CycleState state) {
    NvlinkTopology topology = topologyOf(node);
    if (topology == null || !topology.hasLinks()) {
      return fallback.pickCards(task, node, state);
    }
    CardGroup group = CardGroup.best(topology, free(task, node), task.gpuRequired());
    return group == null ? List.of() : group.cards();
  }

  static NvlinkTopology topologyOf(NodeInfo node) {
    String label = node.topology() != null ? node.topology() : node.labels().get(TOPOLOGY_LABEL);
    return NvlinkTopology.parse(label, node.cards().size());
  }

  private static Set<Integer> free(TaskRequest task, NodeInfo node) {
    Set<Integer> free = new HashSet<>();
    for (CardInfo card : node.freeCards(task.gpuModels())) {
      if (task.gpuMemoryMb() <= 0 || card.memoryTotalMb() - card.memoryUsedMb() >= task.gpuMemoryMb()) {
        free.add(card.index());
      }
    }
    return free;
  }
}
