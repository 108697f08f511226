package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardPicker;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks the task's whole cards among the node's free ones (allowed models only), lowest index first; empty
 * when there are not enough. The nvlink plugin will replace this with domain-aware picking.
 */
public final class LowestIndexCardPicker implements CardPicker {
  @Override
  public String name() {
    return "lowest-index";
  }

  @Override
  public List<Integer> pick(TaskRequest task, NodeInfo node) {
    List<Integer> picked = new ArrayList<>();
    for (CardInfo card : node.freeCards(task.gpuModels())) {
      if (picked.size() == task.gpuRequired()) {
        break;
      }
      if (task.gpuMemoryMb() <= 0 || card.memoryTotalMb() - card.memoryUsedMb() >= task.gpuMemoryMb()) {
        picked.add(card.index());
      }
    }
    return picked.size() == task.gpuRequired() ? picked : List.of();
  }
}
