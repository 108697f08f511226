package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Kick;
import io.heteroflow.protocol.message.Report;
import io.heteroflow.protocol.message.Stop;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.io.PrintStream;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * {@code bench --scenario preempt} (issue 14): N nodes × 8 cards filled with one-card preemptible jobs of priority
 * 10 (bound by the scheduler, then marked running in one statement, as if every agent had claimed them), then M
 * high-priority arrivals (priority 90; 1, 2, 4 or 8 cards) inserted at once and the scheduler kicked. An instant
 * agent on every node confirms each Stop at once with its Report, through the control plane's real handler. It
 * measures the time until every preemptor is bound, each preemptor's bind latency, the victims of each plan
 * against the minimal set (a node full of one-card jobs: exactly as many victims as cards asked for), and checks
 * that no card was ever held by two tasks at once (allocation history) besides the usual invariants.
 */
final class PreemptionBench {
  static final String NAME = "preempt";
  private static final int[] PREEMPTOR_CARDS = {1, 2, 4, 8};
  /** The offline sweep's grace here (15 s in production): see run(). */
  static final int OFFLINE_GRACE_SECONDS = 600;

  private final int nodes;
  private final int preemptors;
  private final BenchRunner.Options options;
  private final PrintStream log;

  PreemptionBench(int nodes, int preemptors, BenchRunner.Options options, PrintStream log) {
    this.nodes = nodes;
    this.preemptors = preemptors;
    this.options = options;
    this.log = log;
  }

  JsonObject run(Database database) throws Exception {
    JsonObject result = new JsonObject().put("scenario", NAME).put("nodes", nodes)
        .put("cards", nodes * BenchScenario.CARDS_PER_NODE).put("preemptors", preemptors)
        .put("date", OffsetDateTime.now(ZoneOffset.UTC).withNano(0).toString())
        .put("machine", String.join(", ", ProcessStats.describeMachine()));
    // on two cores shared with PostgreSQL the fleet's own heartbeat timer lags past the 15 s offline grace
    // during the burst, and nodes that flap offline make nominees plan again: that would measure the flapping
    result.put("offline_grace_s", OFFLINE_GRACE_SECONDS);
    try (BenchRunner.Deployed deployed = BenchRunner.Deployed.start(database, OFFLINE_GRACE_SECONDS)) {
      PrometheusMeterRegistry registry = deployed.registry();
      Vertx vertx = deployed.vertx();
      Pool client = deployed.client();
      SimulatedFleet fleet = SimulatedFleet.register(vertx, deployed.running(), nodes, options.heartbeatSeconds(),
          this::log, result);

      int fill = nodes * BenchScenario.CARDS_PER_NODE;
      long fillStart = System.nanoTime();
      TaskRows.insert(client, tasks("fill", fill, 10, true, new Random(options.seed()), false));
      kick(vertx);
      waitUntil(client, "fill", "scheduled", fill, options.timeoutSeconds());
      await(client.query(BenchSql.MARK_FILL_RUNNING).execute());
      result.put("fill_seconds", round3(seconds(System.nanoTime() - fillStart)));
      log(String.format("  %d one-card preemptible jobs bound and running in %.1f s", fill,
          seconds(System.nanoTime() - fillStart)));

      instantAgents(vertx, fleet);
      long start = System.nanoTime();
      TaskRows.insert(client, tasks("preemptor", preemptors, 90, false, new Random(options.seed() + 1), true));
      kick(vertx);
      waitUntil(client, "preemptor", "scheduled", preemptors, options.timeoutSeconds());
      double allBound = seconds(System.nanoTime() - start);
      result.put("all_preemptors_bound_seconds", round3(allBound));
      log(String.format("  %d preemptors bound %.1f s after their arrival", preemptors, allBound));

      Row latency = await(client.query(BenchSql.PREEMPTOR_LATENCY).execute()).iterator().next();
      result.put("preemptor_bind_ms", new JsonObject().put("p50", round1(latency.getDouble("p50")))
          .put("p99", round1(latency.getDouble("p99"))).put("max", round1(latency.getDouble("max"))));
      Row plans = await(client.query(BenchSql.VICTIMS_PER_PLAN).execute()).iterator().next();
      result.put("plans", plans.getLong("plans")).put("preemptors_that_planned", plans.getLong("planners"))
          .put("victims", plans.getLong("victims")).put("preempting_transitions", plans.getLong("preempting_transitions"))
          .put("victims_per_plan_mean", round3(plans.getDouble("mean")))
          .put("plans_over_minimal", plans.getLong("over")).put("plans_under_minimal", plans.getLong("under"))
          .put("victims_back_in_queue", plans.getLong("requeued"));
      result.put("scrape", new JsonObject().put("preemptions_planned", series(registry,
          "heteroflow_preemptions_total{result=\"planned\"}")).put("preemptions_settled", series(registry,
          "heteroflow_preemptions_total{result=\"settled\"}")));
      fleet.stopHeartbeats();
      result.put("violations", Invariants.check(client));
      result.put("peak_rss_mb", round1(ProcessStats.peakRssMb()));
    }
    return result;
  }

  /** {@code count} tasks named {@code name}; preemptors ask for 1, 2, 4 or 8 cards (4:3:2:1), fills for one. */
  private static List<TaskMix.Task> tasks(String name, int count, int priority, boolean preemptible, Random random,
                                          boolean mixed) {
    List<TaskMix.Task> tasks = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int roll = random.nextInt(10);
      int cards = !mixed ? 1 : PREEMPTOR_CARDS[roll < 4 ? 0 : roll < 7 ? 1 : roll < 9 ? 2 : 3];
      tasks.add(new TaskMix.Task(new TaskSpec(name, "job", null, List.of("sleep", "3600"), Map.of(), priority,
          preemptible, cards, 0, null, List.of(), 0, 0, TaskSpec.DEFAULT_TIMEOUT_SECONDS,
          TaskSpec.DEFAULT_TERMINATION_GRACE_SECONDS, null, Map.of(), Map.of())));
    }
    return tasks;
  }

  /** On every node, an agent that confirms each Stop at once (the task's process "exits" as it is asked). */
  private static void instantAgents(Vertx vertx, SimulatedFleet fleet) throws Exception {
    List<io.vertx.core.Future<Void>> registered = new ArrayList<>();
    for (String nodeId : fleet.nodeIds()) {
      registered.add(vertx.eventBus().<JsonObject>consumer(BusAddresses.agentStop(nodeId), message -> {
        Stop stop = Stop.fromJson(message.body());
        vertx.eventBus().request(BusAddresses.TASK_REPORT, new Report(stop.taskId(), nodeId, TaskStatus.STOPPED,
            143, "StoppedByUser", "stopped for preemption (instant bench agent)", "", null, 0).toJson());
      }).completion());
    }
    await(io.vertx.core.Future.all(registered));
  }

  private static void kick(Vertx vertx) {
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("bench").toJson());
  }

  private void waitUntil(Pool client, String name, String status, int count, double timeoutSeconds)
      throws Exception {
    long deadline = System.nanoTime() + (long) (timeoutSeconds * 1e9);
    while (true) {
      long n = await(client.preparedQuery(BenchSql.COUNT_BY_NAME_AND_STATUS).execute(io.vertx.sqlclient.Tuple.of(name,
          status))).iterator().next().getLong(0);
      if (n >= count) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(n + " of " + count + " " + name + " tasks " + status + " after "
            + timeoutSeconds + " s");
      }
      Thread.sleep(100);
    }
  }

  private static double series(PrometheusMeterRegistry registry, String series) {
    return registry.scrape().lines().filter(line -> line.startsWith(series + " "))
        .mapToDouble(line -> Double.parseDouble(line.substring(series.length() + 1))).sum();
  }

  private void log(String line) {
    log.println("[" + NAME + "] " + line.strip());
  }
}
