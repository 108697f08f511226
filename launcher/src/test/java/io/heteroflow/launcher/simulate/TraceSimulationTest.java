package io.heteroflow.launcher.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The simulator on tiny hand-checked traces: the metric, the protocol, model constraints, and strict files. */
class TraceSimulationTest {
  @TempDir
  Path dir;

  private Trace trace(String nodes, String pods) throws Exception {
    Path nodeFile = Files.writeString(dir.resolve("nodes.csv"), "sn,cpu_milli,memory_mib,gpu,model\n" + nodes);
    Path podFile = Files.writeString(dir.resolve("openb_pod_list_tiny.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n" + pods);
    return Trace.read(nodeFile, podFile);
  }

  @Test
  void wholeGpusFillTheClusterAndTheRestIsSkipped() throws Exception {
    // 3 GPUs of capacity; 4 one-GPU pods = 133 % demand, so no pod is added: 3 placed, 1 skipped, whatever the order
    Trace trace = trace("a,8000,16384,2,T4\nb,8000,16384,1,T4\n",
        "p1,1000,1024,1,1000,\np2,1000,1024,1,1000,\np3,1000,1024,1,1000,\np4,1000,1024,1,1000,\n");
    for (String policy : TraceSimulation.POLICIES) {
      TraceSimulation.Curve curve = TraceSimulation.run(trace, policy, 42);
      assertEquals(3, curve.placed(), policy);
      assertEquals(1, curve.skipped(), policy);
      assertEquals(100.0, curve.at(100), 1e-9, policy);
      assertEquals(100.0, curve.at(130), 1e-9, policy);
      assertEquals(100.0 / 3, curve.at(33), 1e-9, "one pod of three GPUs arrived: " + policy);
    }
  }

  @Test
  void sharesThatDoNotPairUpLeaveTheRestOfEachGpuIdle() throws Exception {
    // 2 GPUs; five 600-milli pods (150 % demand): one per GPU fits, 1200 of 2000 milli allocated = 60 %
    Trace trace = trace("a,8000,16384,1,T4\nb,8000,16384,1,T4\n",
        "s1,100,128,1,600,\ns2,100,128,1,600,\ns3,100,128,1,600,\ns4,100,128,1,600,\ns5,100,128,1,600,\n");
    TraceSimulation.Curve curve = TraceSimulation.run(trace, "frag", 7);
    assertEquals(2, curve.placed());
    assertEquals(60.0, curve.at(100), 1e-9);
    assertEquals(60.0, curve.at(130), 1e-9);
  }

  @Test
  void gpuSpecAndCpuAreRealConstraints() throws Exception {
    // the V100 pods fit only node b (1 GPU); the CPU-heavy pod fits nowhere
    Trace trace = trace("a,8000,16384,1,T4\nb,8000,16384,1,V100M16\n",
        "v1,1000,1024,1,1000,V100M16|V100M32\nv2,1000,1024,1,1000,V100M16|V100M32\nbig,64000,1024,1,1000,\n");
    TraceSimulation.Curve curve = TraceSimulation.run(trace, "binpack", 42);
    assertEquals(1, curve.placed());
    assertEquals(2, curve.skipped());
  }

  @Test
  void theProtocolInflatesWithReplacementToOnePointThreeTimesCapacity() throws Exception {
    Trace trace = trace("a,8000,16384,4,T4\n", "p1,1000,1024,1,1000,\n");
    List<Trace.Pod> arrivals = TraceSimulation.inflate(trace.pods(), 1.3 * trace.gpuCapacityMilli(),
        new java.util.Random(1));
    assertEquals(6, arrivals.size(), "1 pod + 5 drawn: 6 GPUs of demand >= 5.2");
  }

  @Test
  void theTracesOwnPodsArriveFirstInASeededOrderThenTheDrawnOnes() throws Exception {
    Trace trace = trace("a,8000,16384,8,T4\n", "p1,1000,1024,1,1000,\np2,1000,1024,2,1000,\np3,1000,1024,1,500,\n");
    List<Trace.Pod> arrivals = TraceSimulation.inflate(trace.pods(), 1.3 * trace.gpuCapacityMilli(), new java.util.Random(3));
    assertEquals(java.util.Set.copyOf(trace.pods()), java.util.Set.copyOf(arrivals.subList(0, 3)), "each own pod once");
    assertEquals(arrivals, TraceSimulation.inflate(trace.pods(), 1.3 * trace.gpuCapacityMilli(), new java.util.Random(3)));
    double demand = arrivals.stream().mapToDouble(Trace.Pod::gpuMilli).sum();
    assertTrue(demand >= 1.3 * 8000 && demand - arrivals.get(arrivals.size() - 1).gpuMilli() < 1.3 * 8000, "stops at 130 %");
  }

  @Test
  void nodesAreRenamedIntoASeededOrderKeepingTheirCapacity() throws Exception {
    Trace trace = trace("a,8000,16384,1,T4\nb,8000,16384,2,T4\nc,8000,16384,4,T4\n", "p1,1000,1024,1,1000,\n");
    List<io.heteroflow.controlplane.scheduler.framework.NodeInfo> nodes =
        TraceSimulation.inRandomOrder(trace.nodes(), new java.util.Random(5));
    for (int i = 0; i < 3; i++) {
      assertTrue(nodes.get(i).id().endsWith("-" + trace.nodes().get(i).id()), nodes.get(i).id());
      assertEquals(trace.nodes().get(i).gpuTotal(), nodes.get(i).gpuTotal());
    }
    assertEquals(3, nodes.stream().map(node -> node.id().substring(0, 5)).distinct().count());
  }

  @Test
  void theRegistryBuildsEachPolicysPluginsByName() throws Exception {
    Trace trace = trace("a,8000,16384,1,T4\n", "p1,1000,1024,1,1000,\n");
    PluginRegistry registry = TraceSimulation.registry(
        TaskShapeMix.fixed(trace.pods().stream().map(pod -> TaskShape.of(pod.task())).toList()));
    List<String> lockedFilters = List.of("availability", "tenant", "resource-prefilter", "affinity", "gpu-filter",
        "resource-filter", "reservation");
    for (String policy : TraceSimulation.POLICIES) {
      PluginSet plugins = TraceSimulation.plugins(registry, policy);
      List<String> scores = plugins.scores().stream().map(score -> score.plugin().name()).toList();
      assertEquals(policy.equals("frag") ? List.of("binpack", "frag") : List.of(policy), scores, policy);
      assertEquals(lockedFilters, plugins.filters().stream().map(filter -> filter.name()).toList(),
          "the scheduler's locked filters, and no other filter: " + policy);
    }
    assertEquals(List.of("topology"), TraceSimulation.plugins(registry, "topology").scores().stream()
        .map(score -> score.plugin().name()).toList(), "any registered score plugin is a policy");
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
        () -> TraceSimulation.policyConfig(registry, "gpu-filter"));
    assertTrue(unknown.getMessage().contains("known: spread, binpack, nvlink, topology, rdma, frag, replica-spread, bestfit"),
        unknown.getMessage());
  }

  @Test
  void malformedFilesNameTheirLineAndColumn() throws Exception {
    IllegalArgumentException badNumber = assertThrows(IllegalArgumentException.class,
        () -> trace("a,8000,16384,two,T4\n", "p,1,1,1,1000,\n"));
    assertTrue(badNumber.getMessage().contains("line 2, column gpu: must be an integer"), badNumber.getMessage());
    IllegalArgumentException missingColumn = assertThrows(IllegalArgumentException.class,
        () -> Trace.read(Files.writeString(dir.resolve("n.csv"), "sn,cpu_milli,gpu,model\n"), dir.resolve("n.csv")));
    assertTrue(missingColumn.getMessage().contains("line 1, column memory_mib"), missingColumn.getMessage());
    IllegalArgumentException badShape = assertThrows(IllegalArgumentException.class,
        () -> trace("a,8000,16384,1,T4\n", "p,1000,1024,2,500,\n"));
    assertTrue(badShape.getMessage().contains("line 2, column gpu_milli"), badShape.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TraceSimulation.policyConfig("random"));
  }
}
