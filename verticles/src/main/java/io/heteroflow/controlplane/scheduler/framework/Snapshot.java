package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

  List<String> changesSince(int position) {
    return changes.subList(position, changes.size());
  }

  /** The decision memo of this snapshot for {@code plugins} (a new one when the plugin set changed). */
  DecisionMemo memo(PluginSet plugins) {
    if (memo == null || !memo.serves(plugins)) {
      memo = new DecisionMemo(plugins);
    }
    return memo;
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

  public void assume(TaskRequest task, Decision decision) {
    NodeInfo node = nodes.get(decision.nodeId());
    if (node != null) {
      replace(node.withBound(task, decision.gpuIndices(), decision.shard()));
    }
  }
}
