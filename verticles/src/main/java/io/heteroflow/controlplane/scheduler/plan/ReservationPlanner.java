package io.heteroflow.controlplane.scheduler.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The round's reservation plan (SPEC §13), on a {@link Timeline}: each waiting task or group, in plan order, gets
 * the earliest slot where it fits around the slots planned before it — the estimate shown as
 * {@code estimated_start_at}. Plan order puts first whatever has waited past {@code reserveAfter}, longest waiting
 * first, so nothing that arrives later can plan ahead of it; then the rest in queue order. Binding reservations
 * (those that constrain what may start, {@link Reservations}) are the slots of the long waiters and of the first
 * waiting work of each queue. A slot due now binds only work that waits for capacity itself ({@code holdWhenDue}:
 * cards, CPU or memory in use — what ended may not be free in the snapshot yet); for work refused for what the
 * timeline does not judge (load, ports) it does not, or its cards would be held idle. The others are estimates
 * only.
 */
public final class ReservationPlanner {
  private ReservationPlanner() {}

  /** A task or group that could not start, its queue, since when it waits, and its members to plan. */
  public record Waiting(UUID id, boolean group, String label, String queue, Instant since,
                        List<Timeline.Member> members, boolean holdWhenDue) {
    public Waiting {
      members = List.copyOf(members);
    }
  }

  /** The estimates of tasks and of groups, and the reservations that bind the next round. */
  public record Plan(List<Estimate> tasks, List<Estimate> groups, Reservations reservations) {
  }

  public static final String UNKNOWN = "cannot be known: the nodes that could take it are too few, or held by tasks"
      + " whose end is unknown";

  /**
   * Plans {@code inQueueOrder} on {@code timeline} until {@code budget} has been spent (those left out get no new
   * estimate this round: they keep the last one).
   */
  public static Plan plan(List<Waiting> inQueueOrder, Timeline timeline, Duration reserveAfter, Duration budget) {
    Instant now = timeline.now();
    long deadline = System.nanoTime() + budget.toNanos();
    List<Waiting> order = new ArrayList<>();
    inQueueOrder.stream().filter(waiting -> longWaiting(waiting, now, reserveAfter))
        .sorted(Comparator.comparing(Waiting::since)).forEach(order::add);
    inQueueOrder.stream().filter(waiting -> !longWaiting(waiting, now, reserveAfter)).forEach(order::add);
    Set<String> queuesWithHead = new HashSet<>();
    List<Estimate> tasks = new ArrayList<>();
    List<Estimate> groups = new ArrayList<>();
    List<Reservations.Held> held = new ArrayList<>();
    Map<UUID, Integer> planned = new java.util.HashMap<>();
    for (Waiting waiting : order) {
      if (System.nanoTime() > deadline) {
        break;
      }
      boolean head = queuesWithHead.add(waiting.queue());
      int place = planned.size();
      waiting.members().forEach(member -> planned.put(member.task().id(), place));
      Slot slot = timeline.earliest(waiting.members());
      Estimate estimate = new Estimate(waiting.id(), slot == null ? null : slot.start(), slot == null ? UNKNOWN : null);
      (waiting.group() ? groups : tasks).add(estimate);
      if (slot == null) {
        continue;
      }
      boolean longWaiter = longWaiting(waiting, now, reserveAfter);
      if ((head || longWaiter) && (waiting.holdWhenDue() || slot.start().isAfter(now))) {
        Map<String, Timeline.Spare> spare = new LinkedHashMap<>();
        slot.takes().keySet().forEach(node -> spare.put(node, timeline.spare(slot, node)));
        held.add(new Reservations.Held(slot, waiting.label(), spare, place,
            waiting.members().get(0).task().priority(), waiting.since(), longWaiter));
      }
      timeline.book(slot);
    }
    return new Plan(tasks, groups, new Reservations(now, held, planned));
  }

  private static boolean longWaiting(Waiting waiting, Instant now, Duration reserveAfter) {
    return waiting.since() != null && !waiting.since().plus(reserveAfter).isAfter(now);
  }
}
