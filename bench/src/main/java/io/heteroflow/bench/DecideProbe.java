package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.store.TaskSpec;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/** The pipeline probe: times {@code decide} per task on one snapshot of the cluster (CPU only, nothing written). */
final class DecideProbe {
  private DecideProbe() {}

  /** {@code decide} for the first 200 tasks of the burst on one snapshot, staging each (as a round does). */
  static JsonObject run(ControlPlane.Running controlPlane, List<TaskMix.Task> burst) throws Exception {
    Future<List<NodeInfo>> nodes = controlPlane.stores().nodes().snapshotNodes();
    Future<TenantBoundary> boundary = controlPlane.stores().nodes().tenantBoundary();
    await(Future.all(nodes, boundary));
    PluginSet plugins = await(controlPlane.stores().plugins().load().map(controlPlane.registry()::build));
    List<TaskRequest> requests = new ArrayList<>();
    for (TaskMix.Task task : burst.subList(0, Math.min(200, burst.size()))) {
      requests.add(request(task.spec()));
    }
    // one unmeasured pass warms the JIT as a long-running scheduler would be
    decideAll(controlPlane, requests, new Snapshot(nodes.result(), boundary.result()), plugins);
    return decideAll(controlPlane, requests, new Snapshot(nodes.result(), boundary.result()), plugins);
  }

  private static JsonObject decideAll(ControlPlane.Running controlPlane, List<TaskRequest> requests, Snapshot snapshot,
                                      PluginSet plugins) {
    double[] micros = new double[requests.size()];
    int placed = 0;
    long total = System.nanoTime();
    for (int i = 0; i < requests.size(); i++) {
      long start = System.nanoTime();
      Decision decision = controlPlane.pipeline().decide(requests.get(i), snapshot, plugins);
      micros[i] = (System.nanoTime() - start) / 1000.0;
      if (decision.isPlaced()) {
        placed++;
        snapshot.assume(requests.get(i), decision);
      }
    }
    double totalMs = (System.nanoTime() - total) / 1e6;
    Arrays.sort(micros);
    return new JsonObject().put("tasks", requests.size()).put("placed", placed).put("nodes", snapshot.size())
        .put("mean_us", round1(Arrays.stream(micros).average().orElse(Double.NaN)))
        .put("p50_us", round1(quantile(micros, 0.5))).put("p99_us", round1(quantile(micros, 0.99)))
        .put("total_ms", round2(totalMs));
  }

  private static TaskRequest request(TaskSpec spec) {
    return new TaskRequest(UUID.randomUUID(), "default", spec.type(), spec.priority(), spec.gpuRequired(),
        spec.gpuMemoryMb(), spec.gpuType(), spec.gpuModels(), spec.cpuCores(), spec.memoryMb(), spec.nodeSelector(),
        spec.labels());
  }
}
