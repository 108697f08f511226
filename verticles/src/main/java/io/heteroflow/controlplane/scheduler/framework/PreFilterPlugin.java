package io.heteroflow.controlplane.scheduler.framework;

/**
 * PreFilter extension point, once per decision before any node is filtered: checks the task as a whole and may
 * compute what its Filter needs into the {@link CycleState}. A refusal refuses every node with that status (its
 * reason is counted per node, e.g. "0/10 nodes are available: 10 over the tenant's quota."). A plugin set with a
 * PreFilter plugin is decided without the decision memo (the filter verdicts may depend on the task, not its shape)
 * for the tasks it {@link #concerns}; the others still are.
 */
public interface PreFilterPlugin {
  String name();

  Status preFilter(TaskRequest task, Snapshot snapshot, CycleState state);

  /**
   * Whether this plugin's PreFilter (and whatever its Filter or Score then read from the {@link CycleState}) does
   * anything for {@code task}. False promises: for this task it refuses nothing, writes nothing, and its Filter and
   * Score depend only on the task's shape and the node — so the decision memo may answer for it.
   */
  default boolean concerns(TaskRequest task) {
    return true;
  }
}
