package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One benchmark scenario against the real control plane ({@link ControlPlane#deploy}) on a real PostgreSQL:
 * <ol>
 *   <li>the raw two-row bind transaction rate of this PostgreSQL ({@link RawPgBench}, scratch database; measured
 *       again at the end, the figure is the mean: fsync latency drifts);</li>
 *   <li>the control plane is deployed and waited on until it leads; an event-bus interceptor
 *       ({@link BindTracker}) counts the bind requests in flight;</li>
 *   <li>N nodes × 8 cards register the way agents do ({@link SimulatedFleet}): heartbeats through
 *       {@code NodeStore.applyHeartbeat} (and keep heartbeating every {@code heartbeatSeconds}, spread evenly, so
 *       none goes offline; no agent runs, so bound tasks stay {@code scheduled});</li>
 *   <li>warm-up waves of the same mix go through the whole path and are released (the JIT compiles the hot
 *       paths); then the half-load phase: tasks created one by one through TaskStore.create with a kick each,
 *       as the API does, at half the warm rate ({@link WarmUpAndHalfLoad}); then the tables are vacuumed;</li>
 *   <li>a pipeline probe times {@code decide} on the empty fleet (CPU only, nothing written; {@link DecideProbe});</li>
 *   <li>the burst of M tasks ({@link TaskMix}) is inserted in 1,000-row statements (one transaction each, with
 *       the same "created" event TaskStore.create writes; {@link TaskRows}), the scheduler is kicked on
 *       {@link io.heteroflow.protocol.BusAddresses#SCHEDULER_KICK}, and the benchmark waits until no task is
 *       pending, or the bound count stops moving for {@code stallSeconds}, or {@code timeoutSeconds} pass
 *       ({@link MeasuredBurst}, {@link Drain});</li>
 *   <li>latencies come from the tasks table ({@code scheduled_at - created_at}), round durations from the
 *       {@code heteroflow_round_duration} histogram (difference over the drain), conflicts from
 *       {@code heteroflow_bind_conflicts}, CPU from /proc and the thread MXBean, the server time of every
 *       statement from pg_stat_statements when the server preloads it (the embedded one does;
 *       {@link PgStatistics});</li>
 *   <li>a phase probe ({@link PhaseProbe}) times what one round is made of on the loaded cluster: the snapshot
 *       read, the pending-batch read, {@code decide}, and the bind round trip through the bus and the
 *       BindVerticle with 1 and with 16 binds in flight, and a real bind against the raw transaction interleaved
 *       (probe tasks carry a node_selector no node matches, so the scheduler never takes them);</li>
 *   <li>the invariants are checked in PostgreSQL ({@link Invariants}): every task bound at most once,
 *       allocations match the tasks, no card double-booked, shard memory within capacity, node ledgers exact.</li>
 * </ol>
 */
public final class BenchRunner {
  private static final String ADMIN_TOKEN = "bench-admin";
  /** With {@code --heartbeat-s 0} nodes heartbeat once; the offline grace becomes an hour instead of 15 s. */
  private static final int NO_HEARTBEAT_GRACE_SECONDS = 3600;

  /** How to run a scenario; see BenchCommand for the flags. */
  public record Options(double pgSeconds, double timeoutSeconds, double stallSeconds, double heartbeatSeconds,
                        long seed, boolean probes, Path jfrDirectory, int warmupTasks, double halfLoadSeconds,
                        double halfLoadRate) {
    public static Options defaults() {
      return new Options(3.0, 900, 12, 10, 42, true, null, 3000, 5, 0);
    }
  }

  private final BenchScenario scenario;
  private final Options options;
  private final PrintStream log;

  BenchRunner(BenchScenario scenario, Options options, PrintStream log) {
    this.scenario = scenario;
    this.options = options;
    this.log = log;
  }

  /**
   * Runs the scenario on {@code database} (empty: the control plane migrates it); {@code scratch} gives
   * another empty database for the raw PostgreSQL measurement. Answers the result object.
   */
  JsonObject run(Database database, Supplier<Database> scratch) throws Exception {
    JsonObject result = new JsonObject().put("scenario", scenario.name()).put("nodes", scenario.nodes())
        .put("cards", scenario.cards()).put("tasks", scenario.tasks())
        .put("date", OffsetDateTime.now(ZoneOffset.UTC).withNano(0).toString())
        .put("machine", String.join(", ", ProcessStats.describeMachine()));
    boolean peakReset = ProcessStats.resetPeakRss();

    // 1. what PostgreSQL itself can do (measured again after the control plane has gone: fsync latency drifts)
    try (RawPgBench raw = RawPgBench.open(scratch.get(), scenario.nodes())) {
      return run(database, raw, result, peakReset);
    }
  }

  private JsonObject run(Database database, RawPgBench raw, JsonObject result, boolean peakReset) throws Exception {
    // the PostgreSQL server's postmaster PID when it runs on this machine (its CPU is measured), else -1
    long postmaster = raw.postmaster();
    RawPgBench.Rates rawBefore = rawPg(raw);

    // 2. the control plane
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    Vertx vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    Pool client = null;
    try {
      ControlPlane.Options cpOptions = ControlPlane.Options.defaults(0, ADMIN_TOKEN, SchedulerConfig.defaults())
          .withHttp("127.0.0.1", 0);
      if (options.heartbeatSeconds() <= 0) { // nodes heartbeat once: the offline sweep must not take them away
        cpOptions = cpOptions.withOfflineGraceSeconds(NO_HEARTBEAT_GRACE_SECONDS);
      }
      result.put("offline_grace_s", cpOptions.offlineGraceSeconds());
      BindTracker bindTracker = new BindTracker(vertx.eventBus());
      ControlPlane.Running running = await(ControlPlane.deploy(vertx, database, cpOptions, registry));
      awaitLeadership(running);
      client = PgBuilder.pool().with(new PoolOptions().setMaxSize(2))
          .connectingTo(new PgConnectOptions(database.options()).setCachePreparedStatements(true))
          .using(vertx).build();

      // 3. the fleet
      SimulatedFleet fleet = SimulatedFleet.register(vertx, running, scenario.nodes(), options.heartbeatSeconds(),
          this::log, result);

      // warm-up: a smaller burst through the same path, then released, so the measured drain sees a warm JIT
      Drain drain = new Drain(options.stallSeconds(), this::log);
      WarmUpAndHalfLoad warm = new WarmUpAndHalfLoad(scenario, options, drain, this::log);
      if (options.warmupTasks() > 0) {
        warm.warmUp(running, vertx, client, result);
      }

      // steady arrivals at half the warm control plane's rate, through TaskStore.create and a kick per task
      if (options.halfLoadSeconds() > 0 && warm.warmRate() > 0) {
        double rate = options.halfLoadRate() > 0 ? options.halfLoadRate() : warm.warmRate() / 2;
        result.put("half_load", warm.halfLoad(running, vertx, client, rate));
      }
      if (options.warmupTasks() > 0) { // what autovacuum would have done by now in a long-running cluster
        for (String table : BenchSql.VACUUMED_TABLES) {
          await(client.query(BenchSql.vacuumAnalyze(table)).execute());
        }
      }

      // 4. decide on the fresh (empty) cluster: CPU per task, nothing written
      List<TaskMix.Task> burst = TaskMix.generate(scenario.tasks(), options.seed());
      JsonObject phases = new JsonObject();
      if (options.probes()) {
        phases.put("decide_empty_cluster", DecideProbe.run(running, burst));
      }

      // 5. the burst, the kick, the drain; 6. what happened, from PostgreSQL
      new MeasuredBurst(scenario, options, postmaster, drain, this::log)
          .run(vertx, client, registry, bindTracker, fleet, burst, result);

      // 7. what one round is made of, on the loaded cluster
      if (options.probes()) {
        new PhaseProbe(postmaster, this::log).run(running, vertx, client, registry, raw, burst, phases);
        result.put("phases", phases);
      }
      fleet.stopHeartbeats();

      // 8. correctness
      JsonArray violations = Invariants.check(client);
      result.put("violations", violations);
      if (!violations.isEmpty()) {
        log("  INVARIANT VIOLATIONS: " + violations.encode());
      }
      result.put("peak_rss_mb", round1(ProcessStats.peakRssMb()))
          .put("peak_rss_scope", peakReset ? "this scenario (VmHWM reset at its start)" : "process lifetime");
    } finally {
      if (client != null) {
        client.close();
      }
      vertx.close().await(60, TimeUnit.SECONDS);
    }
    RawPgBench.Rates rawAfter = rawPg(raw);
    double one = (rawBefore.oneClient() + rawAfter.oneClient()) / 2;
    double sixteen = (rawBefore.sixteenClients() + rawAfter.sixteenClients()) / 2;
    double fenced = (rawBefore.sixteenClientsWithFence() + rawAfter.sixteenClientsWithFence()) / 2;
    result.put("pg_bind_tx_per_s_1", round1(one)).put("pg_bind_tx_per_s_16", round1(sixteen))
        .put("pg_bind_tx_with_fence_per_s_16", round1(fenced))
        .put("pg_client", RawPgBench.CLIENT)
        .put("pg_bind_tx_runs", new JsonObject()
            .put("before", rates(rawBefore)).put("after", rates(rawAfter))
            .put("statements", new JsonArray().add("BEGIN").add(BenchSql.RAW_BIND_TASK).add(BenchSql.RAW_BIND_NODE)
                .add("COMMIT"))
            .put("fence_variant_adds", BenchSql.RAW_BIND_FENCE));
    Double boundPerS = result.getDouble("bound_per_s");
    if (boundPerS != null && boundPerS > 0) {
      result.put("ratio_to_pg_1", round3(boundPerS / one)).put("ratio_to_pg_16", round3(boundPerS / sixteen));
    }
    return result;
  }

  private RawPgBench.Rates rawPg(RawPgBench raw) throws Exception {
    log("raw PostgreSQL two-row bind transactions (" + options.pgSeconds() + " s each: 1 client, 16, 16 with fence)");
    RawPgBench.Rates rates = raw.measure(options.pgSeconds());
    log(String.format("  %.0f tx/s (1 client), %.0f tx/s (16 clients), %.0f tx/s (16 clients, leader row FOR SHARE)",
        rates.oneClient(), rates.sixteenClients(), rates.sixteenClientsWithFence()));
    return rates;
  }

  private static JsonObject rates(RawPgBench.Rates rates) {
    return new JsonObject().put("clients_1", round1(rates.oneClient())).put("clients_16", round1(rates.sixteenClients()))
        .put("clients_16_with_fence", round1(rates.sixteenClientsWithFence()))
        .put("clients_16_jvm_cpu_ms_per_tx", round3(rates.jvmCpuMsPerTx16()))
        .put("clients_16_pg_cpu_ms_per_tx", round3(rates.pgCpuMsPerTx16()));
  }

  /**
   * A control plane deployed on its own Vert.x and leading, with the benchmark's own two-connection client pool,
   * as the preempt and gangs scenarios run it: the offline grace raised to {@code offlineGraceSeconds}.
   */
  record Deployed(PrometheusMeterRegistry registry, Vertx vertx, ControlPlane.Running running, Pool client)
      implements AutoCloseable {
    static Deployed start(Database database, int offlineGraceSeconds) throws Exception {
      PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
      Vertx vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
      try {
        ControlPlane.Options cpOptions = ControlPlane.Options.defaults(0, ADMIN_TOKEN, SchedulerConfig.defaults())
            .withHttp("127.0.0.1", 0).withOfflineGraceSeconds(offlineGraceSeconds);
        ControlPlane.Running running = await(ControlPlane.deploy(vertx, database, cpOptions, registry));
        awaitLeadership(running);
        Pool client = PgBuilder.pool().with(new PoolOptions().setMaxSize(2)).connectingTo(database.options())
            .using(vertx).build();
        return new Deployed(registry, vertx, running, client);
      } catch (Exception e) {
        vertx.close().await(60, TimeUnit.SECONDS);
        throw e;
      }
    }

    @Override
    public void close() throws Exception {
      client.close();
      vertx.close().await(60, TimeUnit.SECONDS);
    }
  }

  /** Waits (30 s at most) until the freshly deployed control plane leads. */
  static void awaitLeadership(ControlPlane.Running running) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!running.leadership().leading()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the control plane did not become leader within 30 s");
      }
      Thread.sleep(20);
    }
  }

  private void log(String line) {
    if (log != null) {
      log.println("[" + scenario.name() + "] " + line.strip());
    }
  }
}
