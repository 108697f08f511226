package io.heteroflow.controlplane.scheduler.plan;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

/**
 * When capacity frees up (SPEC §13): from a snapshot of the nodes and the expected ends of the tasks on them, the
 * earliest time a task, or a group's members together, could start, and on which cards. Each card is free from
 * now (free in the snapshot), from the latest expected end of what holds it, or never (held by something whose
 * end is unknown, or taken by an outside process); a node's CPU and memory come back as its tasks end. Planned
 * slots are booked on the timeline, so the next plan starts around them. The model counts cards (of the task's
 * allowed models), CPU and memory on the nodes the caller says could take the task once freed; it does not judge
 * NVLink, topology or scores again (the pipeline does that when the time comes), and a shard plans as one card.
 */
public final class Timeline {
  private final Instant now;
  private final Map<String, NodeInfo> nodes;
  private final Map<String, List<Ending>> endings = new HashMap<>();
  private final Map<String, Line> lines = new HashMap<>();

  public Timeline(Collection<NodeInfo> nodes, Collection<Ending> endings, Instant now) {
    this.now = now;
    this.nodes = new LinkedHashMap<>();
    nodes.forEach(node -> this.nodes.put(node.id(), node));
    endings.forEach(ending -> this.endings.computeIfAbsent(ending.nodeId(), k -> new ArrayList<>()).add(ending));
  }

  public Instant now() {
    return now;
  }

  /** One task to plan, and the nodes that could take it once enough is free there (best first). */
  public record Member(TaskRequest task, List<String> eligibleNodes) {
    public Member {
      eligibleNodes = List.copyOf(eligibleNodes);
    }

    int cards() {
      return task.plannedCards();
    }
  }

  /**
   * The earliest slot where every member fits at once (on distinct cards), lasting the longest member's runtime;
   * null when none ever does (the nodes that could are too few, or held by tasks of unknown end).
   */
  public Slot earliest(List<Member> members) {
    if (members.isEmpty()) {
      return null;
    }
    long runtime = members.stream().mapToLong(member -> member.task().runtimeSeconds()).max().orElse(0);
    boolean unbounded = members.stream().anyMatch(member -> member.task().runtimeSeconds() <= 0);
    List<Instant> times = candidateTimes(members);
    // what is free only grows with time, except where a booked slot begins: search as if it were monotone, then
    // make sure of the answer and walk on from there when a booking made it wrong
    int low = 0;
    int high = times.size() - 1;
    Slot found = null;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      Slot slot = assign(members, times.get(mid), unbounded ? Instant.MAX : times.get(mid).plusSeconds(runtime));
      if (slot != null) {
        found = slot;
        high = mid - 1;
      } else {
        low = mid + 1;
      }
    }
    if (found != null) {
      return found;
    }
    return null;
  }

  /** Books {@code slot}: what it takes is not free for later plans over its time. */
  public void book(Slot slot) {
    slot.takes().forEach((nodeId, take) -> line(nodeId).bookings.add(new Booking(slot.start(), slot.end(), take)));
  }

  /**
   * What is left on {@code nodeId} over the slot's time once it takes its part: cards, CPU, memory (the room a
   * later task may use there without pushing the slot back).
   */
  public Spare spare(Slot slot, String nodeId) {
    Line line = line(nodeId);
    Slot.Take take = slot.takes().get(nodeId);
    Free free = line.freeOver(slot.start(), slot.end(), List.of());
    return new Spare(free.cards.size() - take.cards().size(), free.cpu - take.cpuCores(),
        free.memory - take.memoryMb());
  }

  /** Room left on a node over a reserved slot. */
  public record Spare(int cards, double cpuCores, long memoryMb) {
  }

  private List<Instant> candidateTimes(List<Member> members) {
    TreeSet<Instant> times = new TreeSet<>();
    times.add(now);
    Set<String> seen = new HashSet<>();
    for (Member member : members) {
      for (String nodeId : member.eligibleNodes()) {
        if (seen.add(nodeId) && nodes.containsKey(nodeId)) {
          line(nodeId).times(times);
        }
      }
    }
    return new ArrayList<>(times);
  }

  /** Places the members, largest first, each on the eligible node it fills most tightly; null when one finds none. */
  private Slot assign(List<Member> members, Instant start, Instant end) {
    Map<String, Free> free = new HashMap<>();
    Map<String, List<Integer>> cards = new LinkedHashMap<>();
    Map<String, double[]> taken = new LinkedHashMap<>();
    List<Member> largestFirst = new ArrayList<>(members);
    largestFirst.sort(Comparator.comparingInt(Member::cards).reversed());
    Set<UUID> owners = new HashSet<>();
    for (Member member : largestFirst) {
      String best = null;
      int bestCards = Integer.MAX_VALUE;
      for (String nodeId : member.eligibleNodes()) {
        if (!nodes.containsKey(nodeId)) {
          continue;
        }
        Free room = free.computeIfAbsent(nodeId, id -> line(id).freeOver(start, end, member.task().gpuModels()));
        if (room.fits(member) && room.cards.size() < bestCards) {
          best = nodeId;
          bestCards = room.cards.size();
        }
      }
      if (best == null) {
        return null;
      }
      Free room = free.get(best);
      List<Integer> mine = new ArrayList<>(room.cards.subList(0, member.cards()));
      room.take(member, mine);
      cards.computeIfAbsent(best, k -> new ArrayList<>()).addAll(mine);
      double[] sum = taken.computeIfAbsent(best, k -> new double[2]);
      sum[0] += member.task().cpuCores();
      sum[1] += member.task().memoryMb();
      owners.add(member.task().id());
    }
    Map<String, Slot.Take> takes = new LinkedHashMap<>();
    cards.forEach((nodeId, list) -> takes.put(nodeId,
        new Slot.Take(list, taken.get(nodeId)[0], (long) taken.get(nodeId)[1])));
    return new Slot(owners, start, end, takes);
  }

  private Line line(String nodeId) {
    return lines.computeIfAbsent(nodeId, id -> new Line(nodes.get(id), endings.getOrDefault(id, List.of()), now));
  }

  private record Booking(Instant from, Instant to, Slot.Take take) {
    boolean overlaps(Instant start, Instant end) {
      return from.isBefore(end) && start.isBefore(to);
    }
  }

  /** What is free on a node over a window: cards (earliest free first), CPU, memory; taken from as members land. */
  private static final class Free {
    final List<Integer> cards;
    double cpu;
    long memory;

    Free(List<Integer> cards, double cpu, long memory) {
      this.cards = cards;
      this.cpu = cpu;
      this.memory = memory;
    }

    boolean fits(Member member) {
      return cards.size() >= member.cards() && cpu + 1e-9 >= member.task().cpuCores()
          && memory >= member.task().memoryMb();
    }

    void take(Member member, List<Integer> mine) {
      cards.removeAll(mine);
      cpu -= member.task().cpuCores();
      memory -= member.task().memoryMb();
    }
  }

  /** One node's timeline: when each card is free, when CPU and memory come back, and the slots booked on it. */
  private static final class Line {
    final NodeInfo node;
    final Map<Integer, Instant> cardFreeFrom = new LinkedHashMap<>();
    final List<Ending> endings;
    final List<Booking> bookings = new ArrayList<>();

    Line(NodeInfo node, List<Ending> endings, Instant now) {
      this.node = node;
      this.endings = endings;
      for (CardInfo card : node.cards()) {
        Instant from = null;
        if (node.cardIsFree(card)) {
          from = now;
        } else if (!node.use(card.index()).isEmpty()) {
          for (Ending ending : endings) {
            if (ending.holds(card.index()) && (from == null || ending.at().isAfter(from))) {
              from = ending.at().isBefore(now) ? now : ending.at();
            }
          }
        }
        cardFreeFrom.put(card.index(), from);
      }
    }

    void times(TreeSet<Instant> times) {
      cardFreeFrom.values().stream().filter(java.util.Objects::nonNull).forEach(times::add);
      endings.forEach(ending -> times.add(ending.at()));
      bookings.forEach(booking -> {
        if (!Instant.MAX.equals(booking.to())) {
          times.add(booking.to());
        }
      });
    }

    Free freeOver(Instant start, Instant end, List<String> allowedModels) {
      List<Integer> cards = new ArrayList<>();
      node.cards().stream()
          .filter(card -> NodeInfo.allows(allowedModels, card))
          .filter(card -> cardFreeFrom.get(card.index()) != null && !cardFreeFrom.get(card.index()).isAfter(start))
          .filter(card -> bookings.stream().noneMatch(b -> b.overlaps(start, end) && b.take().cards().contains(card.index())))
          .sorted(Comparator.comparing((CardInfo card) -> cardFreeFrom.get(card.index())).thenComparingInt(CardInfo::index))
          .forEach(card -> cards.add(card.index()));
      double cpu = node.cpuFree();
      long memory = node.memoryFreeMb();
      for (Ending ending : endings) {
        if (!ending.at().isAfter(start)) {
          cpu += ending.cpuCores();
          memory += ending.memoryMb();
        }
      }
      for (Booking booking : bookings) {
        if (booking.overlaps(start, end)) {
          cpu -= booking.take().cpuCores();
          memory -= booking.take().memoryMb();
        }
      }
      return new Free(cards, cpu, memory);
    }
  }
}
