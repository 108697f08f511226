package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The snapshot's nodes by rack and by zone, so a group looks for each member's node nearest first — the reference
 * node itself, its rack, its zone, then everywhere — and on a fleet of thousands of nodes usually scans one rack
 * per member instead of every node (SPEC §9: same rack 3 > same zone 2 > other 0). Built once per snapshot: a
 * location an admin changes since counts when the snapshot is next read whole; which nodes pass is always judged
 * anew (the index only orders where to look).
 */
final class RackIndex {
  private final List<NodeInfo> all;
  private final Map<String, List<NodeInfo>> byRack = new HashMap<>();
  private final Map<String, List<NodeInfo>> byZone = new HashMap<>();

  private RackIndex(List<NodeInfo> all) {
    this.all = List.copyOf(all);
    for (NodeInfo node : all) {
      String zone = zoneKey(node);
      if (zone != null) {
        byZone.computeIfAbsent(zone, k -> new ArrayList<>()).add(node);
        if (node.rack() != null) {
          byRack.computeIfAbsent(zone + "/" + node.rack(), k -> new ArrayList<>()).add(node);
        }
      }
    }
  }

  static RackIndex of(java.util.Collection<NodeInfo> nodes) {
    return new RackIndex(new ArrayList<>(nodes));
  }

  /** Where to look for a member placed after {@code reference}: the node itself, its rack, its zone, everywhere. */
  List<List<NodeInfo>> around(NodeInfo reference) {
    List<List<NodeInfo>> tiers = new ArrayList<>();
    tiers.add(List.of(reference));
    String zone = zoneKey(reference);
    if (zone != null) {
      if (reference.rack() != null) {
        tiers.add(byRack.getOrDefault(zone + "/" + reference.rack(), List.of()));
      }
      tiers.add(byZone.getOrDefault(zone, List.of()));
    }
    tiers.add(all);
    return tiers;
  }

  /**
   * Where to look for a group's first member: the rack that could hold all {@code members} copies of it most
   * tightly (so big racks stay whole), else the rack with the most room; then everywhere. Only nodes that
   * {@code pass} count; {@code now} gives a node as the snapshot has it now.
   */
  List<List<NodeInfo>> forFirst(TaskRequest member, int members, java.util.function.Predicate<String> pass,
                                java.util.function.UnaryOperator<NodeInfo> now) {
    List<NodeInfo> best = null;
    long bestFit = Long.MIN_VALUE;
    for (List<NodeInfo> rack : byRack.values()) {
      int room = 0;
      for (NodeInfo node : rack) {
        room += pass.test(node.id()) ? Topology.slots(member, now.apply(node)) : 0;
      }
      if (room == 0) {
        continue;
      }
      long fit = room >= members ? 2_000_000L - room : room;
      if (fit > bestFit || (fit == bestFit && rack.get(0).id().compareTo(best.get(0).id()) < 0)) {
        bestFit = fit;
        best = rack;
      }
    }
    return best == null ? List.of(all) : List.of(best, all);
  }

  private static String zoneKey(NodeInfo node) {
    return node.zone() == null ? null : node.region() + "/" + node.zone();
  }
}
