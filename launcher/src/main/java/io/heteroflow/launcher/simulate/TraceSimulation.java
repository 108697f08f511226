package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The FGD paper's protocol through the scheduler's own pipeline and plugins (no bus, no database): the trace's
 * pods in a seeded random order, then pods drawn from it with replacement until the arrived GPU demand reaches
 * 1.3 × the cluster's GPU capacity (as the reference simulator does); nodes are listed in a seeded random order
 * too (so ties between equal scores fall on no fixed group of nodes); each is placed by the pipeline (built-in filters, gpu/resource filters, the policy's score plugin,
 * card picking and shard placement) or skipped when it fits nowhere; nothing departs. Recorded: the GPU
 * allocation ratio at each percent of arrived demand.
 */
public final class TraceSimulation {
  /** The policies compared by default; any registered score plugin may be named ({@link #policyConfig}). */
  public static final List<String> POLICIES = List.of("spread", "binpack", "bestfit", "frag");
  static final double MAX_DEMAND = 1.30;
  /** Shards in the trace are compute shares of a card: no memory is reserved per card. */
  static final SchedulerConfig CONFIG = new SchedulerConfig(7200, 0, 0, 8000, 8999, Integer.MAX_VALUE,
      new LoadThresholds(100, 100, 100, 100, 1000), Map.of());

  private TraceSimulation() {}

  /** Allocation ratio (%) at arrived demand 0, 1, …, 130 % (index = percent). */
  public record Curve(String policy, long seed, double[] allocationByDemandPercent, int placed, int skipped) {
    public double at(int demandPercent) {
      return allocationByDemandPercent[demandPercent];
    }
  }

  public static Curve run(Trace trace, String policy, long seed) {
    TaskShapeMix mix = TaskShapeMix.fixed(trace.pods().stream().map(pod -> TaskShape.of(pod.task())).toList());
    PluginSet plugins = plugins(registry(mix), policy);
    SchedulingPipeline pipeline = BuiltInPlugins.pipeline(CONFIG);
    Random random = new Random(seed);
    double capacity = trace.gpuCapacityMilli();
    double[] curve = new double[(int) Math.round(MAX_DEMAND * 100) + 1];
    List<Trace.Pod> arrivals = inflate(trace.pods(), MAX_DEMAND * capacity, random);
    Snapshot snapshot = new Snapshot(inRandomOrder(trace.nodes(), random));
    double arrived = 0;
    double allocated = 0;
    int nextPercent = 1;
    int placed = 0;
    int skipped = 0;
    for (Trace.Pod pod : arrivals) {
      Decision decision = pipeline.decide(pod.task(), snapshot, plugins);
      if (decision.isPlaced()) {
        snapshot.assume(pod.task(), decision);
        reflectLoad(snapshot, decision.nodeId());
        allocated += pod.gpuMilli();
        placed++;
      } else {
        skipped++;
      }
      arrived += pod.gpuMilli();
      while (nextPercent < curve.length && arrived >= nextPercent / 100.0 * capacity) {
        curve[nextPercent++] = 100 * allocated / capacity;
      }
    }
    return new Curve(policy, seed, curve, placed, skipped);
  }

  /**
   * The arrivals: every pod of the trace in a seeded random order, then pods drawn from the trace with
   * replacement until the GPU demand reaches {@code demand} (the trace's own pods make up about 98 % of the
   * default trace's capacity, 64 % of gpushare100's).
   */
  static List<Trace.Pod> inflate(List<Trace.Pod> pods, double demand, Random random) {
    List<Trace.Pod> arrivals = new ArrayList<>(pods);
    Collections.shuffle(arrivals, random);
    double total = pods.stream().mapToDouble(Trace.Pod::gpuMilli).sum();
    while (total < demand) {
      Trace.Pod extra = pods.get(random.nextInt(pods.size()));
      arrivals.add(extra);
      total += extra.gpuMilli();
    }
    return arrivals;
  }

  /** The nodes under new names that sort in a seeded random order (the pipeline breaks exact ties by name). */
  static List<NodeInfo> inRandomOrder(List<NodeInfo> nodes, Random random) {
    List<Integer> ranks = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      ranks.add(i);
    }
    Collections.shuffle(ranks, random);
    List<NodeInfo> renamed = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      NodeInfo n = nodes.get(i);
      renamed.add(new NodeInfo(String.format("%05d-%s", ranks.get(i), n.id()), n.gpuVendor(), n.status(),
          n.executable(), n.dedicatedTenant(), n.region(), n.zone(), n.rack(), n.labels(), n.topology(), n.cpuCores(),
          n.cpuPercent(), n.memoryTotalGb(), n.memoryUsedMb(), n.gpuTotal(), n.gpuUsed(), n.cpuAllocated(),
          n.memoryAllocatedMb(), n.inferenceTasks(), n.cards(), n.cardUse()));
    }
    return renamed;
  }

  /**
   * The scheduler's own registry (the same factories, the locked filters included) with frag scoring against the
   * trace's mix, and the simulator's {@code bestfit} baseline registered beside them.
   */
  static PluginRegistry registry(TaskShapeMix fragMix) {
    PluginRegistry registry = BuiltInPlugins.registry(CONFIG, fragMix);
    BuiltInPlugins.register(registry, CONFIG, BestFitScore.DEFINITION);
    return registry;
  }

  /** The plugin set the policy runs with, built by the registry from {@link #policyConfig}. */
  static PluginSet plugins(PluginRegistry registry, String policy) {
    return registry.build(policyConfig(registry, policy));
  }

  /** Checks a policy name against the registry (for the command line, before any trace is read). */
  static Map<String, PluginConfig> policyConfig(String policy) {
    return policyConfig(registry(TaskShapeMix.learning(BuiltInPlugins.FRAG_WINDOW)), policy);
  }

  /**
   * A policy is a registered score plugin: only it is on (weight 1), every other switchable plugin off; nvlink,
   * topology and rdma have no data in the trace and stay off unless named.
   */
  static Map<String, PluginConfig> policyConfig(PluginRegistry registry, String policy) {
    List<String> known = registry.registrations().stream()
        .filter(registration -> !registration.locked() && registration.kind().contains("score"))
        .map(PluginRegistry.Registration::name).toList();
    if (!known.contains(policy)) {
      throw new IllegalArgumentException("--policy: unknown policy '" + policy + "' (known: "
          + String.join(", ", known) + ")");
    }
    Map<String, PluginConfig> configs = new HashMap<>();
    for (PluginRegistry.Registration registration : registry.registrations()) {
      String name = registration.name();
      if (!registration.locked()) {
        configs.put(name, new PluginConfig(name, name.equals(policy), name.equals(policy) ? 1 : 0,
            registration.defaults().extra()));
      }
    }
    if (policy.equals("frag")) {
      // frag decides; binpack (weight 1 against 1000) only breaks frag's ties — measured best on `default`
      configs.put("frag", new PluginConfig("frag", true, 1000, configs.get("frag").extra()));
      configs.put("binpack", new PluginConfig("binpack", true, 1, Map.of()));
    }
    return configs;
  }

  /** The simulated node's live load follows what is placed on it (what a heartbeat would report). */
  private static void reflectLoad(Snapshot snapshot, String nodeId) {
    NodeInfo n = snapshot.node(nodeId);
    double cpuPercent = n.cpuCores() == 0 ? 0 : 100 * n.cpuAllocated() / n.cpuCores();
    snapshot.replace(new NodeInfo(n.id(), n.gpuVendor(), n.status(), n.executable(), n.dedicatedTenant(), n.region(),
        n.zone(), n.rack(), n.labels(), n.topology(), n.cpuCores(), cpuPercent, n.memoryTotalGb(), n.memoryAllocatedMb(),
        n.gpuTotal(), n.gpuUsed(), n.cpuAllocated(), n.memoryAllocatedMb(), n.inferenceTasks(), n.cards(), n.cardUse()));
  }
}
