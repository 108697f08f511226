package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.scheduler.BindVerticle;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.BindOutcomes;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The phase probe: times what one round is made of on the loaded cluster: the snapshot read, the pending-batch
 * read, {@code decide}, and the bind round trip through the bus and the BindVerticle with 1 and with 16 binds
 * in flight, and a real bind against the raw transaction interleaved (probe tasks carry a node_selector no node
 * matches, so the scheduler never takes them).
 */
final class PhaseProbe {
  static final String PROBE_NAME = "bench-probe";

  private final TimedCalls timed;
  private final Consumer<String> log;

  PhaseProbe(long postmaster, Consumer<String> log) {
    this.timed = new TimedCalls(postmaster);
    this.log = log;
  }

  /** Times the parts of a round on the loaded cluster (see the class comment) into {@code phases}. */
  void run(ControlPlane.Running controlPlane, Vertx vertx, Pool client, PrometheusMeterRegistry registry,
           RawPgBench raw, List<TaskMix.Task> burst, JsonObject phases)
      throws Exception {
    log.accept("  phase probe");
    double[] snapshotMs = new double[5];
    double[] pendingMs = new double[5];
    double[] pluginsMs = new double[5];
    for (int i = 0; i < snapshotMs.length; i++) {
      long start = System.nanoTime();
      Future<List<NodeInfo>> nodes = controlPlane.stores().nodes().snapshotNodes();
      Future<TenantBoundary> boundary = controlPlane.stores().nodes().tenantBoundary();
      await(Future.all(nodes, boundary));
      snapshotMs[i] = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      await(controlPlane.stores().tasks().pending(null, 200));
      pendingMs[i] = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      await(controlPlane.stores().plugins().load().map(controlPlane.registry()::build));
      pluginsMs[i] = (System.nanoTime() - start) / 1e6;
    }
    Arrays.sort(snapshotMs);
    Arrays.sort(pendingMs);
    Arrays.sort(pluginsMs);
    phases.put("snapshot_read_ms", round2(snapshotMs[2])).put("pending_batch_read_ms", round2(pendingMs[2]))
        .put("plugin_config_read_ms", round2(pluginsMs[2]));
    phases.put("decide_loaded_cluster", DecideProbe.run(controlPlane, burst));
    phases.put("pg_select_1_round_trip", timed.timedRun(0, 300, 1,
        i -> controlPlane.stores().pool().query(BenchSql.SELECT_ONE).execute().map(rows -> true)));

    // bind round trips on free cards of distinct nodes, through the bus as the scheduler sends them
    Future<List<NodeInfo>> nodes = controlPlane.stores().nodes().snapshotNodes();
    List<int[]> slots = new ArrayList<>();
    List<NodeInfo> snapshot = await(nodes);
    int depth = 0;
    boolean more = true;
    while (more && slots.size() < 600) {
      more = false;
      for (int n = 0; n < snapshot.size() && slots.size() < 600; n++) {
        NodeInfo node = snapshot.get(n);
        List<CardInfo> free = node.freeCards(List.of());
        if (depth < Math.min(free.size(), node.gpuTotal() - node.gpuUsed())) {
          slots.add(new int[] {n, free.get(depth).index()});
          more = true;
        }
      }
      depth++;
    }
    int perRun = Math.min(200, slots.size() / 4);
    if (perRun < 10) {
      phases.put("bind_probe", "skipped: only " + slots.size() + " free cards left");
      return;
    }
    LeaderStore.Fence fence = controlPlane.leadership().fence();
    // probe tasks: one card each, a node_selector no node matches (the scheduler cannot place them), created
    // in one statement just before each timed run, so a scheduler tick rarely finds them pending
    UUID[] probeTasks = new UUID[4 * perRun];
    TaskMix.Task probe = new TaskMix.Task(TaskMix.spec(PROBE_NAME, "job", 50, 1, 0, 4, 32768,
        Map.of("bench-probe", "nowhere")));
    Function<Integer, Future<Boolean>> viaBus = i -> {
      int[] slot = slots.get(i);
      JsonObject request = BindVerticle.request(List.of(new BindStore.Request(probeTasks[i],
          snapshot.get(slot[0]).id(), List.of(slot[1]), null)), fence).toJson();
      return vertx.eventBus().<JsonObject>request(BusAddresses.SCHEDULER_BIND, request,
          new DeliveryOptions().setSendTimeout(10_000)).map(reply -> BindOutcomes.fromJson(reply.body()).outcomes().get(0).bound());
    };
    Function<Integer, Future<Boolean>> direct = i -> {
      int[] slot = slots.get(i);
      return controlPlane.stores().binds().bind(probeTasks[i], snapshot.get(slot[0]).id(), List.of(slot[1]), null, fence)
          .map(outcome -> outcome.bound());
    };
    Map<String, Double> attempts = SchedulerMeters.attempts(registry);
    createProbes(client, probeTasks, probe, 0, perRun);
    phases.put("bind_via_bus_1_in_flight", timed.timedRun(0, perRun, 1, viaBus));
    createProbes(client, probeTasks, probe, perRun, perRun);
    phases.put("bind_direct_1_in_flight", timed.timedRun(perRun, perRun, 1, direct));
    createProbes(client, probeTasks, probe, 2 * perRun, perRun);
    phases.put("bind_via_bus_16_in_flight", timed.timedRun(2 * perRun, perRun, 16, viaBus));
    // the real bind and the raw two-row transaction alternately, one at a time: same disk, same moment
    raw.prepareSingles(perRun);
    createProbes(client, probeTasks, probe, 3 * perRun, perRun);
    List<Function<Integer, Future<Boolean>>> pair = List.of(i -> direct.apply(3 * perRun + i),
        i -> raw.oneTransaction());
    List<JsonObject> interleaved = TimedCalls.interleaved(perRun, pair);
    phases.put("interleaved_bind_vs_raw_tx", new JsonObject().put("bind_direct", interleaved.get(0))
        .put("raw_two_row_tx", interleaved.get(1)));
    // decisions the scheduler made meanwhile (a tick that found probe tasks pending competes with the probes)
    phases.put("scheduler_decisions_during_bind_probes", SchedulerMeters.attemptsSince(registry, attempts).values()
        .stream().mapToDouble(Double::doubleValue).sum());
  }

  private static void createProbes(Pool client, UUID[] ids, TaskMix.Task probe, int from, int count) throws Exception {
    List<UUID> created = TaskRows.insert(client, java.util.Collections.nCopies(count, probe));
    for (int i = 0; i < count; i++) {
      ids[from + i] = created.get(i);
    }
  }
}
