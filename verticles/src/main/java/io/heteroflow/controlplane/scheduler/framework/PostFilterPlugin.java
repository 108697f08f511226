package io.heteroflow.controlplane.scheduler.framework;

import java.util.Map;

/**
 * PostFilter extension point, invoked only when no node passed the filters: sees the failed task, every node's
 * refusal (node id → status, snapshot order) and the decision's {@link CycleState}, and may nominate a node —
 * the hook preemption uses to name the node where evicting victims would make room. Plugins are asked in
 * registration order; the first nomination is kept in the {@link Decision} (which stays unschedulable: a
 * nomination is a plan, not a placement).
 */
public interface PostFilterPlugin {
  String name();

  Result postFilter(TaskRequest task, Snapshot snapshot, Map<String, Status> nodeStatuses, CycleState state);

  /** A nominated node and why, or {@link #none()}. */
  record Result(String nominatedNodeId, String message) {
    private static final Result NONE = new Result(null, null);

    public static Result none() {
      return NONE;
    }

    public static Result nominate(String nodeId, String message) {
      return new Result(nodeId, message);
    }

    public boolean nominates() {
      return nominatedNodeId != null;
    }
  }
}
