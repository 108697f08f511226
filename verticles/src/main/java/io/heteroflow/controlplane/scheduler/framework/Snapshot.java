package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster as one scheduling round sees it, read from PostgreSQL once per round. A round stages each
 * committed bind here ({@link #assume}) so later tasks of the same round see the cards as taken; the next
 * round starts again from PostgreSQL, so a staged decision that the database refused is simply forgotten.
 */
public final class Snapshot {
  private final Map<String, NodeInfo> nodes = new LinkedHashMap<>();

  public Snapshot(Collection<NodeInfo> nodes) {
    for (NodeInfo node : nodes) {
      this.nodes.put(node.id(), node);
    }
  }

  public List<NodeInfo> nodes() {
    return new ArrayList<>(nodes.values());
  }

  public NodeInfo node(String id) {
    return nodes.get(id);
  }

  public int size() {
    return nodes.size();
  }

  public void assume(String nodeId, List<Integer> gpuIndices) {
    NodeInfo node = nodes.get(nodeId);
    if (node != null) {
      nodes.put(nodeId, node.withBound(gpuIndices));
    }
  }
}
