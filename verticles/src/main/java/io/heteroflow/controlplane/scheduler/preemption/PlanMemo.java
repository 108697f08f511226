package io.heteroflow.controlplane.scheduler.preemption;

import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Each node's best plan per task shape for one round: a burst of preemptors of a few shapes on 5,000 full nodes
 * plans every node once per shape, and after that only the nodes the round changed (a plan staged there, a
 * placement). Valid while a node's plan depends only on the task's shape, the node and its occupants — what the
 * decision memo assumes of the filters too — and while the occupants stay those the round read.
 */
public final class PlanMemo {
  private static final class ShapePlans {
    private final Map<String, VictimPlanner.NodePlan> feasible = new HashMap<>();
    private int synced;
  }

  private final Map<TaskRequest, ShapePlans> shapes = new HashMap<>();

  /**
   * The best plan for {@code task} across {@code candidates} (the nodes whose refusal victims could cure);
   * {@code planNode} plans one node, asked only for nodes not planned for this shape or changed since.
   */
  public Optional<VictimPlanner.NodePlan> best(TaskRequest task, Snapshot snapshot, Set<String> candidates,
                                               Function<String, Optional<VictimPlanner.NodePlan>> planNode) {
    ShapePlans plans = shapes.get(task.shape());
    Set<String> todo;
    if (plans == null) {
      plans = new ShapePlans();
      shapes.put(task.shape(), plans);
      todo = candidates;
    } else {
      todo = new LinkedHashSet<>(snapshot.changesSince(plans.synced));
    }
    for (String nodeId : todo) {
      Optional<VictimPlanner.NodePlan> plan = candidates.contains(nodeId) ? planNode.apply(nodeId) : Optional.empty();
      if (plan.isPresent()) {
        plans.feasible.put(nodeId, plan.get());
      } else {
        plans.feasible.remove(nodeId);
      }
    }
    plans.synced = snapshot.changeCount();
    return plans.feasible.values().stream().min(VictimPlanner.BEST);
  }
}
