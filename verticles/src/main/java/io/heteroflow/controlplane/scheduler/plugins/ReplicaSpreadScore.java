package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PreFilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.ScorePlugin;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code replica-spread} (default on, weight 2): the replicas of one inference service prefer different nodes, and
 * different racks where they can, so a node or a rack lost takes as few of a service's replicas as possible. A
 * preference, never a filter: when every node already holds one, replicas double up where the other scores say.
 *
 * <p>For a task with the {@link TaskRequest#SERVICE_LABEL} label (a service's replica), with {@code n} the
 * service's active replicas on the node and {@code o} those on the other nodes of the node's rack:
 * <pre>
 *   score = 100 / (1 + n)   when o = 0 (no other node of its rack holds one)
 *   score =  80 / (1 + n)   when o &gt; 0
 * </pre>
 * So an empty node of an empty rack scores 100, an empty node of a rack that holds a replica 80, a node holding one
 * replica 50 (or 40), two 33.3 (or 26.7): a new node always beats one already holding a replica, and a new rack
 * beats a new node of a rack already used. A rack is (region, zone, rack); a node without a rack is a rack of its
 * own. Every task without the label scores 100 on every node, so its ranking never changes.
 *
 * <p>The counts are every active replica the snapshot knows ({@link NodeInfo#serviceReplicas()}: those scheduled
 * or running as PostgreSQL had them, plus the placements this round staged — a replica with no cards counts
 * too). The PreFilter (which refuses nothing) counts them across the whole snapshot once per decision into the
 * {@link CycleState}; the nodes' own counts can change every placement and the rack's depend on other nodes, so
 * a replica is never decided from the memo of its shape ({@link #concerns}): each one sees the counts as they are.
 * Other tasks do not concern it, and the memo answers for them as before.
 */
public final class ReplicaSpreadScore implements PreFilterPlugin, ScorePlugin {
  public static final String NAME = "replica-spread";
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME, ReplicaSpreadScore::new);

  /** What a node scores when its rack holds no other replica, and when it does, before dividing by 1 + n. */
  static final double OWN_RACK = 100;
  static final double SHARED_RACK = 80;

  /** The replicas of the task's service per rack (nodes with none left out), as this decision counted them. */
  private static final CycleState.Key<Map<String, Integer>> BY_RACK = CycleState.key("replica-spread.by-rack");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public boolean concerns(TaskRequest task) {
    return task.service() != null;
  }

  @Override
  public Status preFilter(TaskRequest task, Snapshot snapshot, CycleState state) {
    String service = task.service();
    if (service == null) {
      return Status.ok();
    }
    Map<String, Integer> byRack = new HashMap<>();
    for (NodeInfo node : snapshot.nodeViews()) {
      int replicas = node.replicasOf(service);
      if (replicas > 0) {
        byRack.merge(rackOf(node), replicas, Integer::sum);
      }
    }
    state.write(BY_RACK, byRack);
    return Status.ok();
  }

  @Override
  public double score(TaskRequest task, NodeInfo node, CycleState state) {
    String service = task.service();
    if (service == null) {
      return OWN_RACK;
    }
    int onNode = node.replicasOf(service);
    Map<String, Integer> byRack = state.read(BY_RACK);
    // decided without the PreFilter (a probe scoring one node): only the node's own count is known
    int onRack = byRack == null ? onNode : byRack.getOrDefault(rackOf(node), 0);
    return (onRack > onNode ? SHARED_RACK : OWN_RACK) / (1 + onNode);
  }

  /** The node's rack as (region, zone, rack); a node without a rack is a rack of its own. */
  static String rackOf(NodeInfo node) {
    return node.rack() == null || node.rack().isBlank() ? "node\u0000" + node.id()
        : "rack\u0000" + node.region() + "\u0000" + node.zone() + "\u0000" + node.rack();
  }
}
