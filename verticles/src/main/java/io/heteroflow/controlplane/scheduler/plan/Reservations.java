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
  public static final Reservations NONE = new Reservations(Instant.EPOCH, List.of());
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

  private final Instant now;
  private final List<Held> all;
  private final Map<String, List<Held>> byNode = new HashMap<>();
  private final Map<java.util.UUID, Integer> ownerRank = new HashMap<>();

  /**
   * One reservation with the spare beside it on each of its nodes (staged down as backfill lands there), and its
   * owner's place in the queue: its priority and since when it waits. It constrains only what is behind the owner
   * (a lower priority, or the same priority and waiting since later); a long waiter's (past reserve_after) also
   * constrains whatever arrived after it, of any priority, so nothing later pushes it back.
   */
  public static final class Held {
    private final Slot slot;
    private final String label;
    private final Map<String, double[]> spare = new HashMap<>();
    private final int priority;
    private final Instant since;
    private final boolean longWaiter;
    private int rank;

    public Held(Slot slot, String label, Map<String, Timeline.Spare> spare, int priority, Instant since,
                boolean longWaiter) {
      this.slot = slot;
      this.label = label;
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

  /** {@code held} in plan order: a reservation planned earlier is not constrained by those planned after it. */
  public Reservations(Instant now, Collection<Held> held) {
    this.now = now;
    this.all = List.copyOf(held);
    for (int rank = 0; rank < all.size(); rank++) {
      Held each = all.get(rank);
      each.rank = rank;
      each.slot().takes().keySet().forEach(node -> byNode.computeIfAbsent(node, k -> new ArrayList<>()).add(each));
      for (java.util.UUID owner : each.slot().owners()) {
        ownerRank.putIfAbsent(owner, rank);
      }
    }
  }

  public List<Held> all() {
    return all;
  }

  /** Whether some reservation is for {@code taskId} (its own reserved nodes are judged for it, not its shape). */
  public boolean owns(java.util.UUID taskId) {
    return ownerRank.containsKey(taskId);
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
        room[0] -= cards(task);
        room[1] -= task.cpuCores();
        room[2] -= task.memoryMb();
      }
    }
  }

  /**
   * Whether {@code held} constrains {@code task}: not when it is for the task, nor when the task's own reservation
   * was planned before it (that one was planned around the task's), nor when the task is ahead of its owner (see
   * {@link Held}), nor when the task will have ended by then.
   */
  private boolean counts(Held held, TaskRequest task) {
    Integer own = ownerRank.get(task.id());
    if (own != null && own <= held.rank) {
      return false;
    }
    boolean arrivedBefore = task.queuedSince() != null && held.since != null && task.queuedSince().isBefore(held.since);
    boolean behind = task.priority() < held.priority || (task.priority() == held.priority && !arrivedBefore);
    if (!behind && !(held.longWaiter && !arrivedBefore)) {
      return false;
    }
    return task.timeoutSeconds() <= 0 || now.plusSeconds(task.timeoutSeconds()).isAfter(held.slot().start());
  }

  private static boolean fits(double[] room, TaskRequest task) {
    return room[0] >= cards(task) && room[1] + 1e-9 >= task.cpuCores() && room[2] >= task.memoryMb();
  }

  private static int cards(TaskRequest task) {
    return Timeline.cards(task);
  }
}
