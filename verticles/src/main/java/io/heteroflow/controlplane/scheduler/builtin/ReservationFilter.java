package io.heteroflow.controlplane.scheduler.builtin;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/**
 * Backfill without delaying a reservation (SPEC §13): on a node reserved for a task or group ahead in the queue, a
 * task may start only if it ends before the reservation starts, or fits in what the reservation leaves spare.
 * Last of the locked filters, so a node refused for another cause names that cause. A reservation constrains only
 * work behind its owner in the queue (and, for a long waiter, whatever arrived after it); a preemptor's nominated
 * node is its own.
 */
public final class ReservationFilter implements FilterPlugin {
  public static final String NAME = "reservation";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, ReservationFilter::new);

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    if (task.isShape()) {
      return Status.ok(); // the memo's shape: the pipeline judges reserved nodes again for each task itself
    }
    io.heteroflow.controlplane.scheduler.framework.Nomination nominated = snapshot.nominationOf(task.id());
    if (nominated != null && nominated.nodeId().equals(node.id())) {
      return Status.ok(); // a preemptor's own node: its victims stop for it, whatever was planned around them
    }
    String refusal = snapshot.reservations().refusal(task, node.id());
    return refusal == null ? Status.ok() : Status.reject(NAME, ReasonCode.Reserved, refusal);
  }
}
