package io.heteroflow.controlplane.scheduler.plan;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reservations that constrain what may start (SPEC §13): for each, the nodes it will start on and what is spare
 * there beside it. A task that is not one of a reservation's owners may start on a reserved node only if it will
 * have ended before the reservation starts (now + its timeout), or if it fits in what is spare there over the
 * reservation's time; staging such a placement uses up that spare. Reserved cards are never held idle: a
 * reservation only constrains what may start, and a new set is made every round. Whether a task ends in time is
 * judged by its timeout (the agent stops it then), not by its expected runtime, so backfill never delays a
 * reservation; a task of unknown timeout never ends in time.
 */
public final class Reservations {
  public static final Reservations NONE = new Reservations(Instant.EPOCH, List.of(), Map.of());
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

  private final Instant now;
  private final List<Held> all;
  private final Map<String, List<Held>> byNode = new HashMap<>();
  private final Map<java.util.UUID, Integer> planned;
  private final java.util.Set<java.util.UUID> owners = new java.util.HashSet<>();

  /**
   * One reservation with the spare beside it on each of its nodes (staged down as backfill lands there), its place
   * in the plan's order, and its owner's priority and since when it waits. It constrains what comes after it in the
   * plan's order, and what the plan did not reach — except work of a higher priority (a preemptor, an urgent task
   * of its queue), unless the owner has waited past reserve_after and that work arrived after it: nothing later
   * pushes a long waiter back.
   */
  public static final class Held {
    private final Slot slot;
    private final String label;
    private final Map<String, double[]> spare = new HashMap<>();
    private final int planIndex;
    private final int priority;
    private final Instant since;
    private final boolean longWaiter;

    public Held(Slot slot, String label, Map<String, Timeline.Spare> spare, int planIndex, int priority, Instant since,
                boolean longWaiter) {
      this.slot = slot;
      this.label = label;
      this.planIndex = planIndex;
      this.priority = priority;
      this.since = since;
      this.longWaiter = longWaiter;
      spare.forEach((node, room) -> this.spare.put(node, new double[] {room.cards(), room.cpuCores(), room.memoryMb()}));
    }

    public Slot slot() {
      return slot;
    }

    /** Who it is for, in words: "task 6f…" or "group train-64". */
    public String label() {
      return label;
    }
  }

  /**
   * {@code held}, and {@code planned}: the place in the plan's order of every task the plan reached (a group's
   * members share theirs).
   */
  public Reservations(Instant now, Collection<Held> held, Map<java.util.UUID, Integer> planned) {
    this.now = now;
    this.all = List.copyOf(held);
    this.planned = Map.copyOf(planned);
    for (Held each : all) {
      each.slot().takes().keySet().forEach(node -> byNode.computeIfAbsent(node, k -> new ArrayList<>()).add(each));
      owners.addAll(each.slot().owners());
    }
  }

  /** The same reservations (and what they have let backfill) at another round's time. */
  public Reservations at(Instant later) {
    return new Reservations(later, all, planned);
  }

  public List<Held> all() {
    return all;
  }

  /** Whether some reservation is for {@code taskId} (its own reserved nodes are judged for it, not its shape). */
  public boolean owns(java.util.UUID taskId) {
    return owners.contains(taskId);
  }

  public Instant now() {
    return now;
  }

  /** The nodes some reservation starts on. */
  public Set<String> nodes() {
    return byNode.keySet();
  }

  /** Whether {@code nodeId} holds a reservation for work other than {@code taskId}: a start there is a backfill. */
  public boolean heldForOthers(String nodeId, java.util.UUID taskId) {
    return byNode.getOrDefault(nodeId, List.of()).stream().anyMatch(held -> !held.slot().owners().contains(taskId));
  }

  /** Why {@code task} may not start on {@code nodeId} now; null when it may. */
  public String refusal(TaskRequest task, String nodeId) {
    for (Held held : byNode.getOrDefault(nodeId, List.of())) {
      if (counts(held, task) && !fits(held.spare.get(nodeId), task)) {
        return "reserved from " + CLOCK.format(held.slot().start()) + " UTC for " + held.label();
      }
    }
    return null;
  }

  /** A placement staged on the round's snapshot: what it holds past a reservation's start uses up the spare. */
  public void staged(TaskRequest task, Decision placed) {
    for (Held held : byNode.getOrDefault(placed.nodeId(), List.of())) {
      if (counts(held, task)) {
        double[] room = held.spare.get(placed.nodeId());
        room[0] -= task.plannedCards();
        room[1] -= task.cpuCores();
        room[2] -= task.memoryMb();
      }
    }
  }

  /**
   * Whether {@code held} constrains {@code task}: not when the plan reached the task before (or at) the
   * reservation — its own, or one planned around it — nor when the task is of a higher priority (see {@link Held}),
   * nor when its timeout ends it before the reservation starts.
   */
  private boolean counts(Held held, TaskRequest task) {
    Integer place = planned.get(task.id());
    if (place != null && place <= held.planIndex) {
      return false;
    }
    boolean arrivedAfter = task.queuedSince() == null || held.since == null || task.queuedSince().isAfter(held.since);
    if (task.priority() > held.priority && !(held.longWaiter && arrivedAfter)) {
      return false;
    }
    return task.timeoutSeconds() <= 0 || now.plusSeconds(task.timeoutSeconds()).isAfter(held.slot().start());
  }

  private static boolean fits(double[] room, TaskRequest task) {
    return room[0] >= task.plannedCards() && room[1] + 1e-9 >= task.cpuCores() && room[2] >= task.memoryMb();
  }

}
