package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster as one scheduling round sees it, read from PostgreSQL once per round: nodes with their card
 * use, and the tenant boundary. A round stages each committed bind here ({@link #assume}) so later tasks of
 * the same round see it; the next round starts again from PostgreSQL, so a staged decision the database
 * refused is simply forgotten.
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

  /** Replaces a node's view (e.g. a simulator reflecting new load). */
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
