package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;

/** Where nodes stand relative to each other for a group (SPEC §9): same rack 3 > same zone 2 > other 0. */
final class Topology {
  private Topology() {}

  static int affinity(NodeInfo node, NodeInfo reference) {
    if (node.id().equals(reference.id())) {
      return 4;
    }
    boolean sameZone = node.zone() != null && node.zone().equals(reference.zone())
        && java.util.Objects.equals(node.region(), reference.region());
    if (sameZone && node.rack() != null && node.rack().equals(reference.rack())) {
      return 3;
    }
    return sameZone ? 2 : 0;
  }

  /** The node's rack as one key (region/zone/rack; nodes without a location share the empty key). */
  static String rackKey(NodeInfo node) {
    if (node.rack() == null && node.zone() == null) {
      return "";
    }
    return node.region() + "/" + node.zone() + "/" + node.rack();
  }

  /**
   * How many copies of {@code member} the node could hold by its unaccounted cards (one for a member without cards):
   * an estimate for ranking racks, cheap enough for thousands of nodes per group; the bind picks the real cards.
   */
  static int slots(TaskRequest member, NodeInfo node) {
    if (member.gpuRequired() <= 0) {
      return 1;
    }
    return Math.max(0, Math.min(node.gpuTotal() - node.gpuUsed(), node.cards().size())) / member.gpuRequired();
  }
}
