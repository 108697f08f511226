package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.framework.Nomination;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.PreemptionStore;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.vertx.core.CompositeFuture;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The leader's snapshot kept between rounds (SPEC §2: a round reads the cluster from PostgreSQL): each round
 * re-reads only the nodes whose version changed, plus every node whose binds settled since (a refused bind
 * leaves no version change). Which nodes were written at all PostgreSQL answers from a watermark of transaction
 * ids (NodeStore.changedNodes), so a round on 5,000 nodes reads a few rows, not every node's version. A node with
 * binds still in flight keeps its staged view (the assumption those binds make) until they settle; a write
 * by someone else seen meanwhile makes it read again then. The
 * snapshot, and with it the pipeline's decision memo, lives on while the tenant boundary and the plugin
 * configuration stay the same; a change of either, a node that disappeared, or a long change log starts a
 * fresh one. Each refresh also reads the live nominations (SPEC §6), which say which nodes are held for a
 * preemptor. PostgreSQL stays the truth: every bind re-checks live rows.
 */
final class SnapshotCache {
  /** Past this many staged changes the snapshot (and its memo's change log) is rebuilt. */
  static final int MAX_CHANGES = 200_000;
  /** At least this often every node's version is compared, whatever the watermark says (defence in depth). */
  static final Duration FULL_SCAN_EVERY = Duration.ofSeconds(60);

  private final NodeStore nodes;
  private final PreemptionStore preemptions;
  private final PluginConfigStore pluginConfigs;
  private final PluginRegistry registry;
  private Map<String, Long> versions = new HashMap<>();
  /** Where the next read of changed nodes starts (NodeStore.changedNodes); meaningless without a snapshot. */
  private long watermark = -1;
  private Instant lastFullScan = Instant.MIN;
  /** Nodes with binds in flight (how many): they keep their staged view until the outcome is known. */
  private final Map<String, Integer> binding = new HashMap<>();
  /** The newest version read of a node while our binds to it were in flight (it was not read then). */
  private final Map<String, Long> writtenInFlight = new HashMap<>();
  /** Nodes whose binds settled since the last read: read again whatever their version says. */
  private final Set<String> settled = new HashSet<>();
  private Snapshot snapshot;
  /** Nominees whose victims have all stopped, not yet handed to the loop (readyNominees). */
  private final Set<UUID> ready = new LinkedHashSet<>();
  /** Every nominee ever found ready while its nomination lives: handed over once. */
  private final Set<UUID> handedOver = new HashSet<>();
  private Map<String, PluginConfig> configs;
  private PluginSet plugins;

  private final Clock clock;

  SnapshotCache(NodeStore nodes, PreemptionStore preemptions, PluginConfigStore pluginConfigs, PluginRegistry registry,
                Clock clock) {
    this.nodes = nodes;
    this.preemptions = preemptions;
    this.clock = clock;
    this.pluginConfigs = pluginConfigs;
    this.registry = registry;
  }

  /** This round's plugin set: the previous one while the configuration is unchanged (it keeps the memo valid). */
  Future<PluginSet> plugins() {
    return pluginConfigs.load().map(loaded -> {
      if (!loaded.equals(configs)) {
        configs = loaded;
        plugins = registry.build(loaded);
      }
      return plugins;
    });
  }

  /** The snapshot brought up to date with PostgreSQL. */
  Future<Snapshot> refresh() {
    Set<String> reread = Set.copyOf(settled);
    // nodes with binds in flight keep their staged view: not worth reading now (a first read takes them all)
    Set<String> inFlight = snapshot == null ? Set.of() : Set.copyOf(binding.keySet());
    boolean fullScan = snapshot == null || !clock.instant().isBefore(lastFullScan.plus(FULL_SCAN_EVERY));
    // the nominations first: one whose victims have all stopped then finds their release in the nodes read next
    Future<List<Nomination>> nominations = preemptions.liveNominations();
    Future<CompositeFuture> nodesRead = nominations.compose(live -> Future.all(
        nodes.changedNodes(fullScan ? -1 : watermark, versions, reread, inFlight), nodes.tenantBoundary()));
    return nodesRead.compose(read -> {
      NodeStore.NodeChanges changed = read.resultAt(0);
      TenantBoundary boundary = read.resultAt(1);
      Map<String, Long> before = new HashMap<>();
      changed.versions().forEach((id, version) -> {
        if (inFlight.contains(id)) {
          // written while our binds are in flight (perhaps by them): judged when they settle
          writtenInFlight.merge(id, version, Math::max);
        } else {
          // binds may have settled while this read was under way: what they taught us (versions) is newer
          before.put(id, versions.get(id));
          versions.merge(id, version, Math::max);
        }
      });
      if (changed.nodeCount() != versions.size() || changed.watermark() < watermark) {
        // a node disappeared, or transaction ids went back (another database behind the same address): read
        // them all again
        reset();
        return refresh();
      }
      watermark = changed.watermark();
      if (fullScan) {
        lastFullScan = clock.instant();
      }
      List<NodeInfo> fresh = new ArrayList<>();
      for (NodeInfo node : changed.nodes()) {
        String id = node.id();
        boolean staged = snapshot != null && snapshot.node(id) != null;
        Long knownBefore = before.get(id);
        if (staged && (binding.containsKey(id) || knownBefore != null && knownBefore > changed.versions().get(id))) {
          // keep the staged view (binds in flight, or a settled bind this read predates); read it again later
          // unless a settle proves the view exact
          versions.put(id, knownBefore);
        } else {
          fresh.add(node);
          if (reread.contains(id)) {
            settled.remove(id);
          }
        }
      }
      if (snapshot == null || !boundary.equals(snapshot.boundary()) || snapshot.changeCount() > MAX_CHANGES) {
        Map<String, NodeInfo> all = new LinkedHashMap<>();
        if (snapshot != null) {
          snapshot.nodeViews().forEach(node -> all.put(node.id(), node));
        }
        fresh.forEach(node -> all.put(node.id(), node));
        snapshot = new Snapshot(all.values(), boundary);
      } else {
        fresh.forEach(snapshot::replace);
      }
      snapshot.nominations(nominations.result());
      Set<UUID> live = new HashSet<>();
      for (Nomination nomination : nominations.result()) {
        live.add(nomination.taskId());
        if (!nomination.waiting() && handedOver.add(nomination.taskId())) {
          ready.add(nomination.taskId());
        }
      }
      handedOver.retainAll(live);
      return Future.succeededFuture(snapshot);
    });
  }

  /**
   * The nominees whose victims have all stopped since the last call (each once per nomination): the loop takes
   * them into its next round, so a preemptor binds as soon as its room is free instead of when the queue scan
   * comes round to it again.
   */
  List<UUID> readyNominees() {
    List<UUID> taken = List.copyOf(ready);
    ready.clear();
    return taken;
  }

  /** A bind to this node is in flight: keep the staged view meanwhile. */
  void staged(String nodeId) {
    binding.merge(nodeId, 1, Integer::sum);
  }

  /**
   * A bind to this node settled. {@code versionAfter} is the node's version after a batch in which every bind
   * to it bound (null otherwise): if that is the version the snapshot knew plus the batch's one write, nobody
   * else wrote meanwhile and the staged view is exactly PostgreSQL's, so the node need not be read again;
   * anything else (a refusal, an unanswered batch, another writer) reads it again, whatever its version says.
   */
  void settled(String nodeId, Long versionAfter) {
    if (binding.merge(nodeId, -1, Integer::sum) <= 0) {
      binding.remove(nodeId);
    }
    Long known = versions.get(nodeId);
    if (versionAfter != null && known != null && known + 1 == versionAfter) {
      versions.put(nodeId, versionAfter);
    } else {
      settled.add(nodeId);
    }
    if (!binding.containsKey(nodeId)) {
      Long written = writtenInFlight.remove(nodeId);
      Long now = versions.get(nodeId);
      if (written != null && (now == null || written > now)) {
        settled.add(nodeId); // somebody else wrote it meanwhile, and the watermark has passed that write
      }
    }
  }

  /** Forgets everything (e.g. on a change of leader): the next round reads every node. */
  void reset() {
    versions = new HashMap<>();
    watermark = -1;
    lastFullScan = Instant.MIN;
    settled.clear();
    writtenInFlight.clear();
    snapshot = null;
    configs = null;
  }
}
