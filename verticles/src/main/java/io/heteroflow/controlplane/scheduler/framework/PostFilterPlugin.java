package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * PostFilter extension point, invoked only when no node passed the filters: sees the failed task, why it failed
 * ({@link Refusals}: the decision's reason code, every node's refusal in snapshot order, and the filter chain to
 * judge a node as it would be), and the decision's {@link CycleState}; it may nominate a node — the hook
 * preemption uses to name the node where evicting victims would make room, and the victims. Plugins are asked
 * in registration order; the first nomination is kept in the {@link Decision}, which stays unschedulable with
 * the pipeline's reason: a nomination is a plan, not a placement, and the scheduler carries it out.
 */
public interface PostFilterPlugin {
  String name();

  Result postFilter(TaskRequest task, Snapshot snapshot, Refusals refusals, CycleState state);

  /** Why no node passed, and the filter chain (without the load thresholds of live readings) for what-ifs. */
  interface Refusals {
    ReasonCode code();

    /** Node id → the refusal, in snapshot order (read-only; built on the first call: thousands of entries). */
    Map<String, Status> byNode();

    /** The ids of the nodes refused with {@code code}, in snapshot order (no map built). */
    List<String> refusedWith(ReasonCode code);

    /** Whether {@code node}, as it would be (e.g. without some tasks), passes every filter for this task. */
    boolean passes(NodeInfo node);
  }

  /** A nominated node, the tasks to preempt there (none: a nomination made earlier), and the plan in words. */
  record Result(String nominatedNodeId, List<UUID> victims, String message) {
    private static final Result NONE = new Result(null, List.of(), null);

    public Result {
      victims = List.copyOf(victims);
    }

    public static Result none() {
      return NONE;
    }

    public static Result nominate(String nodeId, String message) {
      return new Result(nodeId, List.of(), message);
    }

    public static Result preempt(String nodeId, List<UUID> victims, String plan) {
      return new Result(nodeId, victims, plan);
    }

    public boolean nominates() {
      return nominatedNodeId != null;
    }
  }
}
