package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The cluster as the scheduler sees it: nodes with their card use, and the tenant boundary. The leader keeps
 * one between rounds (SnapshotCache): each round brings it up to date by replacing only the nodes PostgreSQL
 * says changed ({@link #replace}), and stages each placement here as soon as it is decided ({@link #assume}),
 * before its bind commits, so later tasks of the round see it. A staged placement whose bind the database
 * refused is corrected when a later round reads that node again. Every replacement is logged
 * ({@link #changeCount}) so the decision memo knows which nodes to look at again; a change of tenant boundary,
 * a node that disappeared or a long log makes the cache start a fresh snapshot.
 */
public final class Snapshot {
  private final Map<String, NodeInfo> nodes = new LinkedHashMap<>();
  private final TenantBoundary boundary;
  /** The ids of nodes replaced since the snapshot was read, in order (a node may appear more than once). */
  private final List<String> changes = new ArrayList<>();
  private DecisionMemo memo;
  private final Occupants occupants = new Occupants();
  /** The live nominations (SPEC §6), by node and by preemptor. */
  private final Map<String, List<Nomination>> nominationsByNode = new HashMap<>();
  private final Map<UUID, Nomination> nominationsByTask = new HashMap<>();
  private final Map<Object, Object> derived = new HashMap<>();
  private io.heteroflow.controlplane.scheduler.plan.Reservations reservations =
      io.heteroflow.controlplane.scheduler.plan.Reservations.NONE;

  public Snapshot(Collection<NodeInfo> nodes, TenantBoundary boundary) {
    for (NodeInfo node : nodes) {
      this.nodes.put(node.id(), node);
    }
    this.boundary = boundary;
  }

  public Snapshot(Collection<NodeInfo> nodes) {
    this(nodes, TenantBoundary.ISOLATED);
  }

  /** The nodes in snapshot order, without copying (read-only). */
  public Collection<NodeInfo> nodeViews() {
    return Collections.unmodifiableCollection(nodes.values());
  }

  /** How many node replacements this snapshot has seen since it was read. */
  public int changeCount() {
    return changes.size();
  }

  /** The ids of the nodes replaced since {@code position} of the change log, in order (read-only). */
  public List<String> changesSince(int position) {
    return changes.subList(position, changes.size());
  }

  /** The decision memo of this snapshot for {@code plugins} (a new one when the plugin set changed). */
  DecisionMemo memo(PluginSet plugins) {
    if (memo == null || !memo.serves(plugins)) {
      memo = new DecisionMemo(plugins);
    }
    return memo;
  }

  /**
   * Something derived from the snapshot's nodes, computed once per snapshot (e.g. the nodes by rack for task
   * groups): only for data that a node's load does not change, since later replacements do not recompute it.
   */
  @SuppressWarnings("unchecked")
  public <T> T derived(Object key, java.util.function.Supplier<T> compute) {
    return (T) derived.computeIfAbsent(key, k -> compute.get());
  }

  public NodeInfo node(String id) {
    return nodes.get(id);
  }

  public int size() {
    return nodes.size();
  }

  public TenantBoundary boundary() {
    return boundary;
  }

  /** Replaces a node's view (a node read again from PostgreSQL, or a simulator reflecting new load). */
  public void replace(NodeInfo node) {
    nodes.put(node.id(), node);
    changes.add(node.id());
  }

  /** The active tasks per node, when this round read them for preemption planning. */
  public Occupants occupants() {
    return occupants;
  }

  /** The live nomination of this pending task, or null. */
  public Nomination nominationOf(UUID taskId) {
    return nominationsByTask.get(taskId);
  }

  /**
   * The nomination that holds {@code nodeId} against {@code task}: another task's, of priority at least the
   * task's, or a reclaim's (any priority); null when none does.
   */
  public Nomination holding(String nodeId, TaskRequest task) {
    List<Nomination> nominated = nominationsByNode.get(nodeId);
    if (nominated == null) {
      return null;
    }
    Nomination holder = null;
    for (Nomination nomination : nominated) {
      boolean holds = nomination.priority() >= task.priority() || nomination.reclaim();
      if (holds && !nomination.taskId().equals(task.id())
          && (holder == null || nomination.priority() > holder.priority())) {
        holder = nomination;
      }
    }
    return holder;
  }

  /**
   * The nominations PostgreSQL holds now; every node whose nominations changed is logged as changed, so the
   * decision memo judges it again (a nomination changes which priorities the node admits).
   */
  public void nominations(Collection<Nomination> live) {
    Map<String, List<Nomination>> next = new HashMap<>();
    live.forEach(each -> next.computeIfAbsent(each.nodeId(), k -> new ArrayList<>()).add(each));
    Set<String> touched = new HashSet<>();
    nominationsByNode.forEach((node, before) -> {
      if (!Set.copyOf(before).equals(Set.copyOf(next.getOrDefault(node, List.of())))) {
        touched.add(node);
      }
    });
    next.keySet().stream().filter(node -> !nominationsByNode.containsKey(node)).forEach(touched::add);
    nominationsByNode.clear();
    nominationsByNode.putAll(next);
    nominationsByTask.clear();
    live.forEach(each -> nominationsByTask.put(each.taskId(), each));
    touched.stream().filter(nodes::containsKey).sorted().forEach(changes::add);
  }

  /** Stages a nomination this round planned: its victims are being preempted, its node admits no lower priority. */
  public void nominate(Nomination nomination, Collection<UUID> victims) {
    nominationsByNode.computeIfAbsent(nomination.nodeId(), k -> new ArrayList<>()).add(nomination);
    nominationsByTask.put(nomination.taskId(), nomination);
    Set<String> touched = new java.util.LinkedHashSet<>(occupants.preempting(nomination.nodeId(), victims));
    touched.add(nomination.nodeId());
    touched.stream().filter(nodes::containsKey).forEach(changes::add);
  }

  /** The reservations that constrain what may start (SPEC §13); none until a round makes some. */
  public io.heteroflow.controlplane.scheduler.plan.Reservations reservations() {
    return reservations;
  }

  /**
   * The round's reservations replace the last round's: their nodes, old and new, are judged again (a reservation's
   * verdict depends on the round's time, so a reserved node is judged again every round).
   */
  public void reserve(io.heteroflow.controlplane.scheduler.plan.Reservations next) {
    java.util.Set<String> touched = new java.util.TreeSet<>(reservations.nodes());
    touched.addAll(next.nodes());
    reservations = next;
    touched.stream().filter(nodes::containsKey).forEach(changes::add);
  }

  public void assume(TaskRequest task, Decision decision) {
    NodeInfo node = nodes.get(decision.nodeId());
    if (node != null) {
      reservations.staged(task, decision);
      replace(node.withBound(task, decision.gpuIndices(), decision.shard()));
    }
  }
}
