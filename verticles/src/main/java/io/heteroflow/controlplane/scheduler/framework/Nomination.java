package io.heteroflow.controlplane.scheduler.framework;

import java.util.UUID;

/**
 * A pending preemptor's claim on the node where its victims are stopping (SPEC §6): until it binds, leaves the
 * queue or its time runs out, no other task of lower or equal priority may take that node (as kube-scheduler
 * treats nominated pods), so what the victims free goes to the preemptor. {@code waiting}: some victim is still
 * preempting (once none is, a preemptor that still finds no room plans again). Read from PostgreSQL into each
 * round's snapshot, and staged there the moment a round plans one.
 *
 * <p>A reclaim's nomination (SPEC §13; its plan says so) holds the node against every other task, whatever its
 * priority: what the victims free is the reclaiming queue's guarantee, and the victims, back in the queue, would
 * otherwise take it straight back.
 */
public record Nomination(UUID taskId, int priority, String nodeId, String plan, boolean waiting) {
  /** How a reclaim plan's text names it (the plan is kept in the preemptor's reason in PostgreSQL). */
  public static final String RECLAIM = "reclaim for queue ";

  /** Whether this nomination is a reclaim's. */
  public boolean reclaim() {
    return plan != null && plan.contains(RECLAIM);
  }
}
