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
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.store.GroupSpec;
import io.heteroflow.controlplane.store.TaskSpec;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.function.BiPredicate;

/**
 * The pipeline probe: times {@code decide} per task (or {@code GangPlanner.decide} per task group) on one snapshot
 * of the cluster (CPU only, nothing written).
 */
final class DecideProbe {
  private DecideProbe() {}

  /** {@code decide} for the first 200 tasks of the burst on one snapshot, staging each (as a round does). */
  static JsonObject run(ControlPlane.Running controlPlane, List<TaskMix.Task> burst) throws Exception {
    List<TaskRequest> requests = new ArrayList<>();
    for (TaskMix.Task task : burst.subList(0, Math.min(200, burst.size()))) {
      requests.add(request(task.spec()));
    }
    return probe(controlPlane, requests, "tasks", (request, loaded) -> {
      Decision decision = controlPlane.pipeline().decide(request, loaded.snapshot(), loaded.plugins());
      if (decision.isPlaced()) {
        loaded.snapshot().assume(request, decision);
      }
      return decision.isPlaced();
    });
  }

  /**
   * {@code GangPlanner.decide} for the first 50 groups on one snapshot, each placed group staged there (as a round
   * does): the decision of a whole group, all its members, as the scheduler's worker makes it.
   */
  static JsonObject groups(ControlPlane.Running controlPlane, List<GroupSpec> groups) throws Exception {
    GangPlanner planner = new GangPlanner(controlPlane.pipeline());
    List<GangRequest> requests = new ArrayList<>();
    for (GroupSpec group : groups.subList(0, Math.min(50, groups.size()))) {
      requests.add(new GangRequest(UUID.randomUUID(), "default", group.priority(), Instant.now(), group.gpuType(),
          group.parallelism(), group.members().stream().map(DecideProbe::request).toList()));
    }
    return probe(controlPlane, requests, "groups",
        (request, loaded) -> planner.decide(request, loaded.snapshot(), loaded.plugins()).placed());
  }

  /** A snapshot of the cluster now and the plugins a round would use. */
  private record Loaded(Snapshot snapshot, PluginSet plugins) {
  }

  /** One unmeasured pass (it warms the JIT as a long-running scheduler would be), then the measured one. */
  private static <R> JsonObject probe(ControlPlane.Running controlPlane, List<R> requests, String unit,
                                      BiPredicate<R, Loaded> decideAndStage) throws Exception {
    Future<List<NodeInfo>> nodes = controlPlane.stores().nodes().snapshotNodes();
    Future<TenantBoundary> boundary = controlPlane.stores().nodes().tenantBoundary();
    await(Future.all(nodes, boundary));
    PluginSet plugins = await(controlPlane.stores().plugins().load().map(controlPlane.registry()::build));
    decideAll(requests, new Loaded(new Snapshot(nodes.result(), boundary.result()), plugins), unit, decideAndStage);
    return decideAll(requests, new Loaded(new Snapshot(nodes.result(), boundary.result()), plugins), unit,
        decideAndStage);
  }

  private static <R> JsonObject decideAll(List<R> requests, Loaded loaded, String unit,
                                          BiPredicate<R, Loaded> decideAndStage) {
    double[] micros = new double[requests.size()];
    int placed = 0;
    long total = System.nanoTime();
    for (int i = 0; i < requests.size(); i++) {
      long start = System.nanoTime();
      boolean isPlaced = decideAndStage.test(requests.get(i), loaded);
      micros[i] = (System.nanoTime() - start) / 1000.0;
      placed += isPlaced ? 1 : 0;
    }
    double totalMs = (System.nanoTime() - total) / 1e6;
    Arrays.sort(micros);
    return new JsonObject().put(unit, requests.size()).put("placed", placed).put("nodes", loaded.snapshot().size())
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
