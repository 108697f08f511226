package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Feasibility;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decides a task group as one unit (SPEC §9): each member is judged by the same filters and scores as a single
 * task ({@link SchedulingPipeline#feasibility}), then the group places its members greedily, largest first (stage
 * order on the pipeline path), preferring for each the node nearest the group's first node (same rack 3 > same
 * zone 2 > other 0, soft), then a node the group already uses (few nodes), then a node it fills exactly or takes
 * whole, then the plugin score; the first node is chosen in the rack that can hold the group most tightly. Cards
 * inside a node are picked by the Bind plugin (nvlink's smallest sufficient domain). Every placement is staged on
 * the snapshot as it goes; if a member finds no node the staged ones are taken back, so a refused group holds no
 * cards, and the refusal counts why ({@link ReasonCode#GangIncomplete}). A group that names no gpu_type is tried
 * on one vendor at a time, most free cards first: its members never mix vendors.
 */
public final class GangPlanner {
  private final SchedulingPipeline pipeline;

  public GangPlanner(SchedulingPipeline pipeline) {
    this.pipeline = pipeline;
  }

  /** A member on its node: its rank, the request it was judged as, and its cards. */
  public record Placement(int rank, TaskRequest member, Decision decision) {
  }

  /**
   * Every member placed (in rank order), or why not: then {@code placements} is empty. {@code before}: the nodes
   * the placement staged on, as they were, so a caller can take the whole group back ({@link #undo}).
   */
  public record GangDecision(GroupPath path, List<Placement> placements, ReasonCode code, String message,
                             List<NodeInfo> before) {
    public boolean placed() {
      return code == null;
    }

    /** The same group refused for {@code why} (its placement taken back by the caller). */
    public GangDecision refused(ReasonCode why, String text) {
      return new GangDecision(path, List.of(), why, text, List.of());
    }
  }

  /** Takes a placed group's staging back from the snapshot. */
  public static void undo(GangDecision decision, Snapshot snapshot) {
    decision.before().forEach(snapshot::replace);
  }

  /** Decides {@code group}; a placed group is staged on the snapshot, a refused one leaves it untouched. */
  public GangDecision decide(GangRequest group, Snapshot snapshot, PluginSet plugins) {
    GroupPath path = GroupPath.of(group.parallelism(), group.members());
    GangDecision first = null;
    for (String vendor : vendorsToTry(group, snapshot)) {
      GangDecision attempt = place(group, path, vendor, snapshot, plugins);
      if (attempt.placed()) {
        return attempt;
      }
      first = first == null ? attempt : first;
    }
    return first;
  }

  /** The group's one gpu_type when it has one (strict), else each vendor with free cards, most free first. */
  static List<String> vendorsToTry(GangRequest group, Snapshot snapshot) {
    if (group.gpuType() != null) {
      return List.of(group.gpuType());
    }
    List<TaskRequest> carded = group.members().stream().filter(GroupPath::usesCards).toList();
    Set<String> declared = new HashSet<>();
    carded.forEach(member -> declared.add(member.gpuType() == null ? "" : member.gpuType()));
    if (carded.isEmpty() || declared.size() > 1 || !declared.contains("")) {
      List<String> one = new ArrayList<>();
      one.add(declared.size() == 1 && !declared.contains("") ? declared.iterator().next() : null);
      return one; // one declared type (strict), mixed declarations (each its own), or no cards at all
    }
    Map<String, Integer> free = new TreeMap<>();
    for (NodeInfo node : snapshot.nodeViews()) {
      if (node.gpuVendor() != null) { // the accounted free cards: an order to try vendors in, nothing more
        free.merge(node.gpuVendor(), Math.max(0, node.gpuTotal() - node.gpuUsed()), Integer::sum);
      }
    }
    List<String> vendors = free.entrySet().stream().filter(entry -> entry.getValue() > 0)
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).map(Map.Entry::getKey).toList();
    List<String> tried = new ArrayList<>(vendors);
    if (tried.isEmpty()) {
      tried.add(null);
    }
    return tried;
  }

  private GangDecision place(GangRequest group, GroupPath path, String vendor, Snapshot snapshot, PluginSet plugins) {
    int n = group.members().size();
    List<TaskRequest> judged = group.members().stream().map(member -> path.judged(member, vendor)).toList();
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    if (path != GroupPath.PIPELINE_PARALLEL) {
      order.sort(Comparator.<Integer>comparingInt(i -> -judged.get(i).gpuRequired())
          .thenComparingLong(i -> -judged.get(i).gpuMemoryMb()).thenComparingInt(i -> i));
    }
    Map<TaskRequest, Feasibility> byShape = new HashMap<>();
    Map<String, NodeInfo> originals = new LinkedHashMap<>();
    NodeInfo[] placedOn = new NodeInfo[n];
    Decision[] decisions = new Decision[n];
    NodeInfo anchor = null;
    for (int index : order) {
      TaskRequest member = judged.get(index);
      Feasibility feasibility = byShape.computeIfAbsent(member.shape(),
          shape -> pipeline.feasibility(member, snapshot, plugins));
      RackIndex nearby = snapshot.derived(RackIndex.class, () -> RackIndex.of(snapshot.nodeViews()));
      NodeInfo reference = path == GroupPath.PIPELINE_PARALLEL && index > 0 ? placedOn[index - 1] : anchor;
      List<List<NodeInfo>> tiers = reference == null ? nearby.forFirst(member, n, feasibility::passes,
          node -> snapshot.node(node.id()))
          : nearby.around(reference);
      Placed placed = place(member, tiers, originals.keySet(), feasibility, snapshot, plugins);
      if (placed == null) {
        originals.values().forEach(snapshot::replace);
        return refusal(path, judged, member, feasibility, vendor);
      }
      originals.putIfAbsent(placed.node().id(), placed.node());
      snapshot.assume(member, placed.decision());
      placedOn[index] = snapshot.node(placed.node().id());
      decisions[index] = placed.decision();
      anchor = anchor == null ? placed.node() : anchor;
    }
    List<Placement> placements = new ArrayList<>();
    for (int rank = 0; rank < n; rank++) {
      placements.add(new Placement(rank, judged.get(rank), decisions[rank]));
    }
    return new GangDecision(path, path == GroupPath.DATA_PARALLEL ? byTopology(placements, snapshot) : placements,
        null, null, List.copyOf(originals.values()));
  }

  private record Placed(NodeInfo node, Decision decision) {
  }

  /**
   * The member's node, looked for tier by tier (nearest first): in each, among the nodes that pass now (a node
   * the group staged on is judged again), one the group already uses (few nodes), then one the member fills
   * exactly or takes whole, then the best score, then the id. A node whose cards cannot be picked after all is
   * dropped and the next is tried. Null when no tier holds one.
   */
  private Placed place(TaskRequest member, List<List<NodeInfo>> tiers, Set<String> used, Feasibility feasibility,
                       Snapshot snapshot, PluginSet plugins) {
    Set<String> tried = new HashSet<>();
    Comparator<NodeInfo> preference = Comparator.<NodeInfo>comparingInt(node -> used.contains(node.id()) ? 0 : 1)
        .thenComparingInt(node -> -fit(member, node)).thenComparingDouble(node -> -feasibility.score(node.id()))
        .thenComparing(NodeInfo::id);
    for (List<NodeInfo> tier : tiers) {
      List<NodeInfo> passing = new ArrayList<>();
      for (NodeInfo judged : tier) {
        NodeInfo now = snapshot.node(judged.id());
        boolean passes = used.contains(judged.id()) ? now != null && pipeline.passes(member, now, snapshot, plugins)
            : feasibility.passes(judged.id());
        if (now != null && passes && tried.add(judged.id())) {
          passing.add(now);
        }
      }
      while (!passing.isEmpty()) {
        NodeInfo candidate = java.util.Collections.min(passing, preference);
        Decision decision = pipeline.placeOn(member, candidate, feasibility.score(candidate.id()), snapshot, plugins);
        if (decision.isPlaced()) {
          return new Placed(candidate, decision);
        }
        passing.remove(candidate);
      }
    }
    return null;
  }

  /** 2: the member takes exactly the node's free cards; 1: the node is wholly free; 0: neither. */
  private static int fit(TaskRequest member, NodeInfo node) {
    if (member.gpuRequired() > 0 && node.wholeCardsFor(member) == member.gpuRequired()) {
      return 2;
    }
    return node.gpuUsed() == 0 ? 1 : 0;
  }

  /** Identical members: rank r takes the r-th placement in topology order, so neighbouring ranks sit together. */
  private static List<Placement> byTopology(List<Placement> placements, Snapshot snapshot) {
    List<Placement> sorted = new ArrayList<>(placements);
    sorted.sort(Comparator.comparing((Placement each) -> Topology.rackKey(snapshot.node(each.decision().nodeId())))
        .thenComparing(each -> each.decision().nodeId())
        .thenComparing(each -> each.decision().gpuIndices().isEmpty() ? -1 : each.decision().gpuIndices().get(0)));
    List<Placement> ranked = new ArrayList<>();
    for (int rank = 0; rank < placements.size(); rank++) {
      ranked.add(new Placement(rank, placements.get(rank).member(), sorted.get(rank).decision()));
    }
    return ranked;
  }

  /** "needs 4 members with 8 free nvidia cards each; 3 of 10 nodes qualify, room for 3: 3 offline, …". */
  private static GangDecision refusal(GroupPath path, List<TaskRequest> judged, TaskRequest member,
                                      Feasibility feasibility, String vendor) {
    long alike = judged.stream().filter(other -> other.shape().equals(member.shape())).count();
    String type = member.gpuType() != null ? member.gpuType() + " " : vendor != null ? vendor + " " : "";
    int room = feasibility.feasibleNodes().stream().mapToInt(node -> Topology.slots(member, node)).sum();
    String reasons = feasibility.refusedReasons();
    String message = "the group of " + judged.size() + " cannot be completed (" + path.name().toLowerCase()
        .replace('_', ' ') + "): needs " + alike + (alike == 1 ? " member" : " members") + " with "
        + (member.isShard() ? member.gpuMemoryMb() + " MB of a " + type + "card" : member.gpuRequired() + " free "
        + type + "cards") + " each; " + feasibility.feasibleCount() + " of " + feasibility.nodeCount()
        + " nodes qualify, room for " + room + (reasons.isEmpty() ? "" : ": " + reasons) + ". Nothing was bound.";
    ReasonCode code = feasibility.feasibleCount() == 0 && feasibility.refusalCode() == ReasonCode.GPUTypeUnavailable
        ? ReasonCode.GPUTypeUnavailable : ReasonCode.GangIncomplete;
    return new GangDecision(path, List.of(), code, message, List.of());
  }
}
