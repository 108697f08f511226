package io.heteroflow.launcher.bench;

import io.heteroflow.controlplane.scheduler.BindVerticle;
import io.heteroflow.controlplane.store.BindStore;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One benchmark scenario against the real control plane ({@link ControlPlane#deploy}) on a real PostgreSQL:
 * <ol>
 *   <li>the raw two-row bind transaction rate of this PostgreSQL ({@link RawPgBench}, scratch database; measured
 *       again at the end, the figure is the mean: fsync latency drifts);</li>
 *   <li>the control plane is deployed and waited on until it leads; an event-bus interceptor
 *       ({@link BindTracker}) counts the bind requests in flight;</li>
 *   <li>N nodes × 8 cards register the way agents do: heartbeats through {@code NodeStore.applyHeartbeat}
 *       (and keep heartbeating every {@code heartbeatSeconds}, spread evenly, so none goes offline; no agent
 *       runs, so bound tasks stay {@code scheduled});</li>
 *   <li>warm-up waves of the same mix go through the whole path and are released (the JIT compiles the hot
 *       paths); then the half-load phase: tasks created one by one through TaskStore.create with a kick each,
 *       as the API does, at half the warm rate; then the tables are vacuumed;</li>
 *   <li>a pipeline probe times {@code decide} on the empty fleet (CPU only, nothing written);</li>
 *   <li>the burst of M tasks ({@link TaskMix}) is inserted in 1,000-row statements (one transaction each, with
 *       the same "created" event TaskStore.create writes), the scheduler is kicked on
 *       {@link BusAddresses#SCHEDULER_KICK}, and the benchmark waits until no task is pending, or the bound
 *       count stops moving for {@code stallSeconds}, or {@code timeoutSeconds} pass;</li>
 *   <li>latencies come from the tasks table ({@code scheduled_at - created_at}), round durations from the
 *       {@code heteroflow_round_duration} histogram (difference over the drain), conflicts from
 *       {@code heteroflow_bind_conflicts}, CPU from /proc and the thread MXBean, the server time of every
 *       statement from pg_stat_statements when the server preloads it (the embedded one does);</li>
 *   <li>a phase probe times what one round is made of on the loaded cluster: the snapshot read, the
 *       pending-batch read, {@code decide}, and the bind round trip through the bus and the BindVerticle with
 *       1 and with 16 binds in flight, and a real bind against the raw transaction interleaved (probe tasks
 *       carry a node_selector no node matches, so the scheduler never takes them);</li>
 *   <li>the invariants are checked in PostgreSQL ({@link Invariants}): every task bound at most once,
 *       allocations match the tasks, no card double-booked, shard memory within capacity, node ledgers exact.</li>
 * </ol>
 */
public final class BenchRunner {
  static final String PROBE_NAME = "bench-probe";
  private static final int INSERT_CHUNK = 1000;
  private static final int REGISTER_IN_FLIGHT = 32;
  private static final String ADMIN_TOKEN = "bench-admin";
  private static final GpuVendor[] VENDORS = {GpuVendor.NVIDIA, GpuVendor.ASCEND, GpuVendor.HYGON, GpuVendor.MUSA};
  private static final long CARD_MB = 81920;
  /** With {@code --heartbeat-s 0} nodes heartbeat once; the offline grace becomes an hour instead of 15 s. */
  private static final int NO_HEARTBEAT_GRACE_SECONDS = 3600;

  /** How to run a scenario; see BenchCommand for the flags. */
  public record Options(double pgSeconds, double timeoutSeconds, double stallSeconds, double heartbeatSeconds,
                        long seed, boolean probes, Path jfrDirectory, int warmupTasks, double halfLoadSeconds) {
    public static Options defaults() {
      return new Options(3.0, 900, 12, 10, 42, true, null, 3000, 5);
    }
  }

  private final BenchScenario scenario;
  private final Options options;
  private final PrintStream log;
  /** The PostgreSQL server's postmaster PID when it runs on this machine (its CPU is measured), else -1. */
  private long postmaster = -1;
  /** Tasks bound per second in the last warm-up wave (the warm control plane's rate), 0 before. */
  private double warmRate;

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
    postmaster = raw.postmaster();
    RawPgBench.Rates rawBefore = rawPg(raw);

    // 2. the control plane
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    Vertx vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    Pool client = null;
    try {
      ControlPlane.Options cpOptions = ControlPlane.Options.defaults(0, ADMIN_TOKEN, SchedulerConfig.defaults())
          .withHttp("127.0.0.1", 0);
      if (options.heartbeatSeconds() <= 0) { // nodes heartbeat once: the offline sweep must not take them away
        cpOptions = new ControlPlane.Options(cpOptions.httpHost(), cpOptions.httpPort(), cpOptions.adminToken(),
            cpOptions.config(), NO_HEARTBEAT_GRACE_SECONDS, cpOptions.ledgerCheckMs(), cpOptions.poolSize(),
            cpOptions.leaseSeconds(), cpOptions.leaderBeatMs(), cpOptions.recoveryMs());
      }
      result.put("offline_grace_s", cpOptions.offlineGraceSeconds());
      BindTracker bindTracker = new BindTracker(vertx.eventBus());
      ControlPlane.Running running = await(ControlPlane.deploy(vertx, database, cpOptions, registry));
      Services services = running.services();
      awaitLeadership(services);
      client = PgBuilder.pool().with(new PoolOptions().setMaxSize(2))
          .connectingTo(new PgConnectOptions(database.options()).setCachePreparedStatements(true))
          .using(vertx).build();

      // 3. the fleet
      long registerStart = System.nanoTime();
      AtomicLong sequence = new AtomicLong(1);
      List<String> nodeIds = new ArrayList<>();
      for (int i = 0; i < scenario.nodes(); i++) {
        nodeIds.add(String.format("bench-%05d", i));
      }
      await(forEachLimited(nodeIds, REGISTER_IN_FLIGHT,
          id -> services.nodes().applyHeartbeat(heartbeat(id, sequence.get()))));
      double registerSeconds = seconds(System.nanoTime() - registerStart);
      log(String.format("  %d nodes registered in %.2f s", scenario.nodes(), registerSeconds));
      result.put("register_seconds", round3(registerSeconds));
      Heartbeats heartbeats = new Heartbeats(vertx, services, nodeIds, options.heartbeatSeconds(), sequence);

      // warm-up: a smaller burst through the same path, then released, so the measured drain sees a warm JIT
      if (options.warmupTasks() > 0) {
        warmUp(services, vertx, client, result);
      }

      // steady arrivals at half the warm control plane's rate, through TaskStore.create and a kick per task
      if (options.halfLoadSeconds() > 0 && warmRate > 0) {
        result.put("half_load", halfLoad(services, vertx, client, warmRate / 2));
      }
      if (options.warmupTasks() > 0) { // what autovacuum would have done by now in a long-running cluster
        for (String table : List.of("tasks", "nodes", "cards", "allocations", "task_events", "gpu_ledger")) {
          await(client.query("VACUUM ANALYZE " + table).execute());
        }
      }

      // 4. decide on the fresh (empty) cluster: CPU per task, nothing written
      List<TaskMix.Task> burst = TaskMix.generate(scenario.tasks(), options.seed());
      JsonObject phases = new JsonObject();
      if (options.probes()) {
        phases.put("decide_empty_cluster", decideProbe(services, burst));
      }

      // 5. the burst, the kick, the drain
      boolean statements = resetStatements(client);
      bindTracker.reset();
      PgStats pgBefore = PgStats.read(client);
      TimerWindow rounds = TimerWindow.open(registry, "heteroflow_round_duration");
      double conflictsBefore = counter(registry, "heteroflow_bind_conflicts");
      Map<String, Double> attemptsBefore = attempts(registry);
      JfrProfile profile = options.jfrDirectory() == null ? null : JfrProfile.start(options.jfrDirectory(), scenario.name());
      ProcessStats.Reading cpuBefore = ProcessStats.read(postmaster);
      long insertStart = System.nanoTime();
      insert(client, burst);
      double insertSeconds = seconds(System.nanoTime() - insertStart);
      vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, new JsonObject().put("reason", "benchmark burst"));
      OffsetDateTime kickedAt = await(client.query("SELECT clock_timestamp() AS t").execute()).iterator().next()
          .getOffsetDateTime("t");
      log(String.format("  %d tasks inserted in %.2f s; scheduler kicked", scenario.tasks(), insertSeconds));
      String ending = awaitDrain(client, TaskMix.NAME, options.timeoutSeconds());
      ProcessStats.Reading cpuAfter = ProcessStats.read(postmaster);
      JsonObject jfr = profile == null ? null : profile.stopAndSummarise();
      TimerWindow.Stats roundStats = rounds.close();
      PgStats pgAfter = PgStats.read(client);
      JsonArray topStatements = statements ? topStatements(client) : null;
      JsonObject bindRequests = bindTracker.window();
      double conflicts = counter(registry, "heteroflow_bind_conflicts") - conflictsBefore;
      Map<String, Double> attemptsDuring = attemptsSince(registry, attemptsBefore);

      // 6. what happened, from PostgreSQL
      JsonObject drain = drainFigures(client, kickedAt);
      long bound = drain.getLong("bound");
      double drainSeconds = drain.getDouble("drain_seconds", Double.NaN);
      result.put("bound", bound).put("unbound", scenario.tasks() - bound).put("ending", ending)
          .put("insert_seconds", round3(insertSeconds))
          .put("drain_seconds", round3(drainSeconds))
          .put("bound_per_s", round1(bound == 0 || !(drainSeconds > 0) ? 0 : bound / drainSeconds))
          .put("bound_per_s_after_kick", drain.getValue("bound_per_s_after_kick"))
          .put("p50_ms", drain.getValue("p50_ms")).put("p99_ms", drain.getValue("p99_ms"))
          .put("max_ms", drain.getValue("max_ms"))
          .put("latency_by_kind", drain.getJsonObject("by_kind"))
          .put("bind_interval_ms", drain.getJsonObject("bind_interval_ms"))
          .put("round_p50_ms", round2(roundStats.p50Ms())).put("round_p99_ms", round2(roundStats.p99Ms()))
          .put("rounds", roundStats.count()).put("round_mean_ms", round2(roundStats.meanMs()))
          .put("rounds_total_seconds", round3(roundStats.totalMs() / 1000))
          .put("bind_conflicts", Math.round(conflicts))
          .put("bind_requests", bindRequests)
          .put("scheduling_attempts", new JsonObject(new LinkedHashMap<>(attemptsDuring)));
      double windowSeconds = seconds(cpuAfter.nanoTime() - cpuBefore.nanoTime());
      double jvmCpu = cpuAfter.jvmCpuSeconds() - cpuBefore.jvmCpuSeconds();
      double pgCpu = cpuAfter.postgresCpuSeconds() - cpuBefore.postgresCpuSeconds();
      JsonObject threadCpu = new JsonObject();
      double javaThreads = 0;
      for (Map.Entry<String, Double> entry : cpuAfter.threadsSince(cpuBefore).entrySet()) {
        javaThreads += entry.getValue();
        if (threadCpu.size() < 8) {
          threadCpu.put(entry.getKey(), round3(entry.getValue()));
        }
      }
      threadCpu.put("(GC, JIT and other VM threads)", round3(Math.max(0, jvmCpu - javaThreads)));
      double machineBusy = cpuAfter.machineBusySecondsSince(cpuBefore);
      double others = machineBusy - jvmCpu - (Double.isFinite(pgCpu) ? pgCpu : 0);
      result.put("window_seconds", round3(windowSeconds))
          .put("cpu_seconds", round3(jvmCpu)).put("jvm_cpu_seconds", round3(jvmCpu))
          .put("pg_cpu_seconds", round3(pgCpu))
          .put("machine_busy_percent", round1(100 * cpuAfter.machineBusySince(cpuBefore)))
          .put("other_processes_cpu_seconds", round3(Math.max(0, others)))
          .put("gc_pause_ms", cpuAfter.gcMillis() - cpuBefore.gcMillis())
          .put("gc_count", cpuAfter.gcCount() - cpuBefore.gcCount())
          .put("jit_compile_ms", cpuAfter.jitMillis() - cpuBefore.jitMillis())
          .put("cores", ProcessStats.cores())
          .put("thread_cpu_seconds", threadCpu)
          .put("pg_transactions_per_bound_task", bound == 0 ? null
              : round2((pgAfter.commits() - pgBefore.commits()) / (double) bound))
          .put("pg_rollbacks", pgAfter.rollbacks() - pgBefore.rollbacks())
          .put("heartbeats_sent", heartbeats.sent())
          .put("heartbeat_period_s", options.heartbeatSeconds());
      if (jfr != null) {
        result.put("jfr", jfr);
      }
      if (topStatements != null) {
        for (int i = 0; i < topStatements.size(); i++) {
          JsonObject statement = topStatements.getJsonObject(i);
          statement.put("calls_per_bound_task", bound == 0 ? null : round2(statement.getLong("calls") / (double) bound))
              .put("ms_per_bound_task", bound == 0 ? null : round3(statement.getDouble("total_ms") / bound));
        }
        result.put("pg_statements", topStatements);
      }
      if (others > 0.1 * windowSeconds * ProcessStats.cores()) {
        log(String.format("  WARNING: other processes used %.1f CPU s of the %.1f s window (%d cores): the machine"
            + " was not quiet, the figures are pessimistic", others, windowSeconds, ProcessStats.cores()));
      }
      log(String.format("  %s: %d/%d bound in %.2f s (%.0f/s), p50 %s ms, p99 %s ms", ending, bound,
          scenario.tasks(), drainSeconds, result.getDouble("bound_per_s"), result.getValue("p50_ms"),
          result.getValue("p99_ms")));

      // 7. what one round is made of, on the loaded cluster
      if (options.probes()) {
        phaseProbe(services, vertx, client, registry, raw, burst, phases);
        result.put("phases", phases);
      }
      heartbeats.stop();

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
      vertx.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
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
            .put("statements", new JsonArray().add("BEGIN").add(RawPgBench.CAS_SQL).add(RawPgBench.CAPACITY_SQL)
                .add("COMMIT"))
            .put("fence_variant_adds", RawPgBench.FENCE_SQL));
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

  private void awaitLeadership(Services services) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!services.leadership().leading()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the control plane did not become leader within 30 s");
      }
      Thread.sleep(20);
    }
  }

  /** The agent heartbeat of a simulated node (NodeReading.heartbeat's shape), cards idle and cool. */
  static JsonObject heartbeat(String nodeId, long sequence) {
    int number = Integer.parseInt(nodeId.substring(nodeId.lastIndexOf('-') + 1));
    GpuVendor vendor = VENDORS[number % VENDORS.length];
    JsonArray cards = new JsonArray();
    for (int i = 0; i < BenchScenario.CARDS_PER_NODE; i++) {
      cards.add(new JsonObject().put("index", i).put("uuid", nodeId + "-gpu-" + i).put("model", vendor.id() + "-80g")
          .put("memory_total_mb", CARD_MB).put("memory_used_mb", 0).put("utilization_percent", 0)
          .put("temperature_c", 40).put("numa_node", i < 4 ? 0 : 1));
    }
    return new JsonObject().put("node_id", nodeId).put("boot_id", "bench-boot").put("seq", sequence)
        .put("gpu_vendor", vendor.id()).put("cpu_cores", 128).put("cpu_percent", 5.0)
        .put("memory_total_gb", 1024.0).put("memory_used_mb", 16384).put("cards", cards)
        .put("active_tasks", new JsonArray()).put("internal_ips", new JsonArray().add("10.0.0." + (number % 250 + 1)))
        .put("labels", new JsonObject()).put("topology", null)
        .put("location", new JsonObject().put("region", "bench").put("zone", "z" + (number % 4))
            .put("rack", "r" + (number / 40)))
        .put("dedicated_tenant", null);
  }

  /** Keeps every node's heartbeat fresh: each node once per period, spread over 100 ms ticks. */
  private static final class Heartbeats {
    private final Vertx vertx;
    private final long timer;
    private final AtomicLong sent = new AtomicLong();

    Heartbeats(Vertx vertx, Services services, List<String> nodeIds, double periodSeconds, AtomicLong sequence) {
      this.vertx = vertx;
      if (periodSeconds <= 0) {
        timer = -1;
        return;
      }
      int ticks = (int) Math.max(1, Math.round(periodSeconds * 10));
      AtomicInteger tick = new AtomicInteger();
      timer = vertx.setPeriodic(100, id -> {
        int slot = tick.getAndIncrement() % ticks;
        if (slot == 0) {
          sequence.incrementAndGet();
        }
        long seq = sequence.get();
        for (int i = slot; i < nodeIds.size(); i += ticks) {
          sent.incrementAndGet();
          services.nodes().applyHeartbeat(heartbeat(nodeIds.get(i), seq));
        }
      });
    }

    long sent() {
      return sent.get();
    }

    void stop() {
      if (timer >= 0) {
        vertx.cancelTimer(timer);
      }
    }
  }

  private static final String INSERT_BURST = "WITH created AS ("
      + "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible, gpu_required, gpu_memory_mb, spec,"
      + " cpu_cores, memory_mb)"
      + " SELECT u.id, 'default', u.name, u.type, 'pending', u.priority, false, u.gpu, u.gpu_memory, u.spec::jsonb,"
      + " u.cpu, u.memory FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[], $6::bigint[],"
      + " $7::text[], $8::float8[], $9::bigint[]) AS u(id, name, type, priority, gpu, gpu_memory, spec, cpu, memory)"
      + " RETURNING id)"
      + " INSERT INTO task_events (task_id, kind, from_status, to_status, message)"
      + " SELECT id, 'transition', NULL, 'pending', 'created' FROM created";

  /** The burst in statements of 1,000 rows, one transaction each (tasks and their "created" events). */
  static List<UUID> insert(Pool client, List<TaskMix.Task> tasks) throws Exception {
    List<UUID> all = new ArrayList<>(tasks.size());
    for (int from = 0; from < tasks.size(); from += INSERT_CHUNK) {
      List<TaskMix.Task> chunk = tasks.subList(from, Math.min(tasks.size(), from + INSERT_CHUNK));
      int n = chunk.size();
      UUID[] ids = new UUID[n];
      String[] names = new String[n];
      String[] types = new String[n];
      Integer[] priorities = new Integer[n];
      Integer[] gpus = new Integer[n];
      Long[] gpuMemory = new Long[n];
      String[] specs = new String[n];
      Double[] cpus = new Double[n];
      Long[] memory = new Long[n];
      for (int i = 0; i < n; i++) {
        TaskSpec spec = chunk.get(i).spec();
        ids[i] = UUID.randomUUID();
        all.add(ids[i]);
        names[i] = spec.name();
        types[i] = spec.type();
        priorities[i] = spec.priority();
        gpus[i] = spec.gpuRequired();
        gpuMemory[i] = spec.gpuMemoryMb();
        specs[i] = spec.toSpecJson().encode();
        cpus[i] = spec.cpuCores();
        memory[i] = spec.memoryMb();
      }
      await(client.preparedQuery(INSERT_BURST).execute(Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(names)
          .addArrayOfString(types).addArrayOfInteger(priorities).addArrayOfInteger(gpus).addArrayOfLong(gpuMemory)
          .addArrayOfString(specs).addArrayOfDouble(cpus).addArrayOfLong(memory)));
    }
    return all;
  }

  static final String WARMUP_NAME = "bench-warmup";

  /**
   * {@code warmupTasks} tasks of the same mix, inserted, kicked and drained like the burst, then released
   * (scheduled → failed through TaskStore, which returns their cards), and the tables vacuumed (as autovacuum
   * would have done in a long-running cluster): the measured burst then meets compiled code, not the
   * interpreter, on an empty fleet. Also gives the warm rate that the half-load phase halves.
   */
  private void warmUp(Services services, Vertx vertx, Pool client, JsonObject result) throws Exception {
    // waves that fit in half the fleet's cards, at most 1,000 tasks each
    int wave = (int) Math.max(1, Math.min(1000, scenario.cards() * 0.5 / TaskMix.CARDS_PER_TASK));
    long start = System.nanoTime();
    int bound = 0;
    int waves = 0;
    for (int done = 0; done < options.warmupTasks(); done += wave) {
      bound += warmUpWave(services, vertx, client, Math.min(wave, options.warmupTasks() - done), waves++);
    }
    double seconds = seconds(System.nanoTime() - start);
    log(String.format("  warm-up: %d tasks in %d waves, %d bound (last wave %.0f/s), released, in %.1f s",
        options.warmupTasks(), waves, bound, warmRate, seconds));
    result.put("warmup_tasks", options.warmupTasks()).put("warmup_bound", bound)
        .put("warmup_seconds", round3(seconds)).put("warmup_last_wave_per_s", round1(warmRate));
  }

  private int warmUpWave(Services services, Vertx vertx, Pool client, int tasks, int wave) throws Exception {
    insert(client, TaskMix.generate(WARMUP_NAME, tasks, options.seed() + 1 + wave));
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, new JsonObject().put("reason", "benchmark warm-up"));
    awaitDrain(client, WARMUP_NAME, Math.min(options.timeoutSeconds(), 300));
    Row rate = await(client.query("SELECT count(*) AS n, extract(epoch FROM max(scheduled_at) - min(created_at))::float8"
        + " AS s FROM tasks WHERE name = '" + WARMUP_NAME + "' AND status = 'scheduled'").execute()).iterator().next();
    if (rate.getLong("n") > 0 && rate.getDouble("s") != null && rate.getDouble("s") > 0) {
      warmRate = rate.getLong("n") / rate.getDouble("s");
    }
    release(services, client, WARMUP_NAME);
    return (int) (long) rate.getLong("n");
  }

  /** Fails every pending or scheduled task named {@code name} (scheduled ones return their cards). */
  private static void release(Services services, Pool client, String name) throws Exception {
    List<UUID> scheduled = new ArrayList<>();
    List<UUID> pending = new ArrayList<>();
    await(client.query("SELECT id, status FROM tasks WHERE name = '" + name + "'"
        + " AND status IN ('pending', 'scheduled')").execute()).forEach(row ->
        (row.getString("status").equals("scheduled") ? scheduled : pending).add(row.getUUID("id")));
    TaskStore.Details released = new TaskStore.Details(null, null, "BenchRelease", "released by the benchmark");
    await(forEachLimited(scheduled, 16,
        id -> services.tasks().transition(id, TaskStatus.SCHEDULED, TaskStatus.FAILED, released)));
    await(forEachLimited(pending, 16,
        id -> services.tasks().transition(id, TaskStatus.PENDING, TaskStatus.FAILED, released)));
  }

  static final String HALF_LOAD_NAME = "bench-half-load";

  /**
   * Tasks of the same mix (8-card gangs asking 4 cards instead, see TaskMix) arriving at {@code rate} per second for {@code halfLoadSeconds} (capped to fit in
   * 40 % of the cards), each created through TaskStore.create and announced with a kick carrying its id,
   * exactly what the API does; then create→scheduled from the tasks table. Released afterwards.
   */
  private JsonObject halfLoad(Services services, Vertx vertx, Pool client, double rate) throws Exception {
    int total = (int) Math.max(1, Math.min(rate * options.halfLoadSeconds(),
        scenario.cards() * 0.4 / TaskMix.CARDS_PER_TASK));
    List<TaskMix.Task> tasks = TaskMix.generate(HALF_LOAD_NAME, total, options.seed() + 100, 4);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    Promise<Void> submitted = Promise.promise();
    AtomicInteger outstanding = new AtomicInteger(total);
    long start = System.nanoTime();
    vertx.setPeriodic(2, timer -> {
      int due = (int) Math.min(total, Math.floor(seconds(System.nanoTime() - start) * rate) + 1);
      while (next.get() < due) {
        TaskSpec spec = tasks.get(next.getAndIncrement()).spec();
        services.tasks().create("default", spec, null, "half-load")
            .onSuccess(created -> vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK,
                new JsonObject().put("task_id", created.task().id().toString())))
            .onFailure(e -> failed.incrementAndGet())
            .onComplete(v -> {
              if (outstanding.decrementAndGet() == 0) {
                submitted.tryComplete();
              }
            });
      }
      if (next.get() >= total) {
        vertx.cancelTimer(timer);
      }
    });
    await(submitted.future());
    double submitSeconds = seconds(System.nanoTime() - start);
    String ending = awaitDrain(client, HALF_LOAD_NAME, Math.min(options.timeoutSeconds(), 300));
    Row row = await(client.query("SELECT count(scheduled_at) AS bound,"
        + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
        + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99,"
        + " max(extract(epoch FROM scheduled_at - created_at))::float8 AS max,"
        + " extract(epoch FROM max(created_at) - min(created_at))::float8 AS span"
        + " FROM tasks WHERE name = '" + HALF_LOAD_NAME + "'").execute()).iterator().next();
    release(services, client, HALF_LOAD_NAME);
    JsonObject figures = new JsonObject().put("target_rate_per_s", round1(rate)).put("tasks", total)
        .put("failed_creates", failed.get()).put("ending", ending).put("bound", row.getLong("bound"))
        .put("achieved_rate_per_s", round1(row.getDouble("span") == null || row.getDouble("span") <= 0 ? Double.NaN
            : (total - 1) / row.getDouble("span")))
        .put("submit_seconds", round3(submitSeconds));
    if (row.getLong("bound") > 0) {
      figures.put("p50_ms", round2(row.getDouble("p50") * 1000)).put("p99_ms", round2(row.getDouble("p99") * 1000))
          .put("max_ms", round2(row.getDouble("max") * 1000));
    }
    log(String.format("  half load: %d tasks at %.0f/s: p50 %s ms, p99 %s ms (%s)", total, rate,
        figures.getValue("p50_ms"), figures.getValue("p99_ms"), ending));
    return figures;
  }

  /** Polls every 250 ms; answers why it stopped: "drained", "stalled" or "timed out". */
  private String awaitDrain(Pool client, String name, double timeoutSeconds) throws Exception {
    long start = System.nanoTime();
    long lastChange = start;
    long lastBound = -1;
    long lastLog = start;
    while (true) {
      Row row = await(client.query("SELECT count(*) FILTER (WHERE status = 'pending') AS pending,"
          + " count(*) FILTER (WHERE status <> 'pending') AS bound FROM tasks WHERE name = '" + name + "'")
          .execute()).iterator().next();
      long pending = row.getLong("pending");
      long bound = row.getLong("bound");
      long now = System.nanoTime();
      if (pending == 0) {
        return "drained";
      }
      if (bound != lastBound) {
        lastBound = bound;
        lastChange = now;
      }
      if (seconds(now - lastChange) > options.stallSeconds()) {
        await(client.query("SELECT coalesce(reason_code, '(none)') AS code, coalesce(min(reason_message), '') AS message,"
            + " count(*) AS n, min(priority) AS priority, min(gpu_required) AS gpus, min(gpu_memory_mb) AS gpu_mb"
            + " FROM tasks WHERE name = '" + name + "' AND status = 'pending' GROUP BY 1 ORDER BY 3 DESC LIMIT 5")
            .execute()).forEach(reason -> log(String.format("  stalled with %d pending (%s: %s; priority %d, %d cards,"
            + " %d MB)", reason.getLong("n"), reason.getString("code"), reason.getString("message"),
            reason.getInteger("priority"), reason.getInteger("gpus"), reason.getLong("gpu_mb"))));
        return "stalled";
      }
      if (seconds(now - start) > timeoutSeconds) {
        return "timed out";
      }
      if (seconds(now - lastLog) >= 10) {
        lastLog = now;
        log(String.format("  … %d bound, %d pending after %.0f s", bound, pending, seconds(now - start)));
      }
      Thread.sleep(250);
    }
  }

  /** Drain time, throughput and create→scheduled latencies of the burst, from the tasks table. */
  private static JsonObject drainFigures(Pool client, OffsetDateTime kickedAt) throws Exception {
    String bench = "name = '" + TaskMix.NAME + "'";
    Row row = await(client.preparedQuery("SELECT count(*) FILTER (WHERE status <> 'pending') AS bound,"
        + " extract(epoch FROM max(scheduled_at) - min(created_at))::float8 AS drain,"
        + " extract(epoch FROM max(scheduled_at) - $1)::float8 AS after_kick,"
        + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
        + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99,"
        + " max(extract(epoch FROM scheduled_at - created_at))::float8 AS max"
        + " FROM tasks WHERE " + bench).execute(Tuple.of(kickedAt))).iterator().next();
    long bound = row.getLong("bound");
    JsonObject figures = new JsonObject().put("bound", bound);
    if (bound == 0) {
      return figures.put("by_kind", new JsonObject()).put("bind_interval_ms", new JsonObject());
    }
    double afterKick = row.getDouble("after_kick");
    figures.put("drain_seconds", row.getDouble("drain"))
        .put("bound_per_s_after_kick", afterKick > 0 ? round1(bound / afterKick) : null)
        .put("p50_ms", round2(row.getDouble("p50") * 1000)).put("p99_ms", round2(row.getDouble("p99") * 1000))
        .put("max_ms", round2(row.getDouble("max") * 1000));
    JsonObject byKind = new JsonObject();
    await(client.query("SELECT CASE WHEN gpu_required > 0 THEN gpu_required || '-card' ELSE 'fractional' END AS kind,"
        + " count(*) AS n, count(scheduled_at) AS bound,"
        + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
        + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99"
        + " FROM tasks WHERE " + bench + " GROUP BY 1 ORDER BY 1").execute()).forEach(kind -> byKind.put(
        kind.getString("kind"), new JsonObject().put("tasks", kind.getLong("n")).put("bound", kind.getLong("bound"))
            .put("p50_ms", kind.getDouble("p50") == null ? null : round2(kind.getDouble("p50") * 1000))
            .put("p99_ms", kind.getDouble("p99") == null ? null : round2(kind.getDouble("p99") * 1000))));
    figures.put("by_kind", byKind);
    // gaps between consecutive binds (each bind transaction stamps now() = its start): the per-task cycle
    List<Double> times = new ArrayList<>();
    await(client.query("SELECT extract(epoch FROM scheduled_at)::float8 AS t FROM tasks WHERE " + bench
        + " AND scheduled_at IS NOT NULL ORDER BY scheduled_at").execute()).forEach(r -> times.add(r.getDouble("t")));
    double[] gaps = new double[Math.max(0, times.size() - 1)];
    double over20 = 0;
    int over20Count = 0;
    for (int i = 1; i < times.size(); i++) {
      gaps[i - 1] = (times.get(i) - times.get(i - 1)) * 1000;
      if (gaps[i - 1] > 20) {
        over20 += gaps[i - 1];
        over20Count++;
      }
    }
    Arrays.sort(gaps);
    figures.put("bind_interval_ms", new JsonObject().put("p50", round3(quantile(gaps, 0.5)))
        .put("p90", round3(quantile(gaps, 0.9))).put("p99", round3(quantile(gaps, 0.99)))
        .put("gaps_over_20ms", over20Count).put("seconds_in_gaps_over_20ms", round3(over20 / 1000)));
    return figures;
  }

  /** {@code decide} for the first 200 tasks of the burst on one snapshot, staging each (as a round does). */
  private static JsonObject decideProbe(Services services, List<TaskMix.Task> burst) throws Exception {
    Future<List<NodeInfo>> nodes = services.nodes().snapshotNodes();
    Future<TenantBoundary> boundary = services.nodes().tenantBoundary();
    await(Future.all(nodes, boundary));
    PluginSet plugins = await(services.plugins().load().map(services.registry()::build));
    List<TaskRequest> requests = new ArrayList<>();
    for (TaskMix.Task task : burst.subList(0, Math.min(200, burst.size()))) {
      requests.add(request(task.spec()));
    }
    // one unmeasured pass warms the JIT as a long-running scheduler would be
    decideAll(services, requests, new Snapshot(nodes.result(), boundary.result()), plugins);
    return decideAll(services, requests, new Snapshot(nodes.result(), boundary.result()), plugins);
  }

  private static JsonObject decideAll(Services services, List<TaskRequest> requests, Snapshot snapshot,
                                      PluginSet plugins) {
    double[] micros = new double[requests.size()];
    int placed = 0;
    long total = System.nanoTime();
    for (int i = 0; i < requests.size(); i++) {
      long start = System.nanoTime();
      Decision decision = services.pipeline().decide(requests.get(i), snapshot, plugins);
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

  /** Times the parts of a round on the loaded cluster (see the class comment). */
  private void phaseProbe(Services services, Vertx vertx, Pool client, PrometheusMeterRegistry registry,
                          RawPgBench raw, List<TaskMix.Task> burst, JsonObject phases)
      throws Exception {
    log("  phase probe");
    double[] snapshotMs = new double[5];
    double[] pendingMs = new double[5];
    double[] pluginsMs = new double[5];
    for (int i = 0; i < snapshotMs.length; i++) {
      long start = System.nanoTime();
      Future<List<NodeInfo>> nodes = services.nodes().snapshotNodes();
      Future<TenantBoundary> boundary = services.nodes().tenantBoundary();
      await(Future.all(nodes, boundary));
      snapshotMs[i] = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      await(services.tasks().pending(null, 200));
      pendingMs[i] = (System.nanoTime() - start) / 1e6;
      start = System.nanoTime();
      await(services.plugins().load().map(services.registry()::build));
      pluginsMs[i] = (System.nanoTime() - start) / 1e6;
    }
    Arrays.sort(snapshotMs);
    Arrays.sort(pendingMs);
    Arrays.sort(pluginsMs);
    phases.put("snapshot_read_ms", round2(snapshotMs[2])).put("pending_batch_read_ms", round2(pendingMs[2]))
        .put("plugin_config_read_ms", round2(pluginsMs[2]));
    phases.put("decide_loaded_cluster", decideProbe(services, burst));
    phases.put("pg_select_1_round_trip", timedRun(0, 300, 1,
        i -> services.pool().query("SELECT 1").execute().map(rows -> true)));

    // bind round trips on free cards of distinct nodes, through the bus as the scheduler sends them
    Future<List<NodeInfo>> nodes = services.nodes().snapshotNodes();
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
    LeaderStore.Fence fence = services.leadership().fence();
    // probe tasks: one card each, a node_selector no node matches (the scheduler cannot place them), created
    // in one statement just before each timed run, so a scheduler tick rarely finds them pending
    UUID[] probeTasks = new UUID[4 * perRun];
    TaskMix.Task probe = new TaskMix.Task(TaskMix.spec(PROBE_NAME, "job", 50, 1, 0, 4, 32768,
        Map.of("bench-probe", "nowhere")));
    Function<Integer, Future<Boolean>> viaBus = i -> {
      int[] slot = slots.get(i);
      JsonObject request = BindVerticle.request(List.of(new BindStore.Request(probeTasks[i],
          snapshot.get(slot[0]).id(), List.of(slot[1]), null)), fence);
      return vertx.eventBus().<JsonObject>request(BusAddresses.SCHEDULER_BIND, request,
          new DeliveryOptions().setSendTimeout(10_000)).map(reply -> BindVerticle.outcomes(reply.body()).get(0).bound());
    };
    Function<Integer, Future<Boolean>> direct = i -> {
      int[] slot = slots.get(i);
      return services.binds().bind(probeTasks[i], snapshot.get(slot[0]).id(), List.of(slot[1]), null, fence)
          .map(outcome -> outcome.bound());
    };
    Map<String, Double> attempts = attempts(registry);
    createProbes(client, probeTasks, probe, 0, perRun);
    phases.put("bind_via_bus_1_in_flight", timedRun(0, perRun, 1, viaBus));
    createProbes(client, probeTasks, probe, perRun, perRun);
    phases.put("bind_direct_1_in_flight", timedRun(perRun, perRun, 1, direct));
    createProbes(client, probeTasks, probe, 2 * perRun, perRun);
    phases.put("bind_via_bus_16_in_flight", timedRun(2 * perRun, perRun, 16, viaBus));
    // the real bind and the raw two-row transaction alternately, one at a time: same disk, same moment
    raw.prepareSingles(perRun);
    createProbes(client, probeTasks, probe, 3 * perRun, perRun);
    List<Function<Integer, Future<Boolean>>> pair = List.of(i -> direct.apply(3 * perRun + i),
        i -> raw.oneTransaction());
    List<JsonObject> interleaved = interleaved(perRun, pair);
    phases.put("interleaved_bind_vs_raw_tx", new JsonObject().put("bind_direct", interleaved.get(0))
        .put("raw_two_row_tx", interleaved.get(1)));
    // decisions the scheduler made meanwhile (a tick that found probe tasks pending competes with the probes)
    phases.put("scheduler_decisions_during_bind_probes", attemptsSince(registry, attempts).values().stream()
        .mapToDouble(Double::doubleValue).sum());
  }

  private static void createProbes(Pool client, UUID[] ids, TaskMix.Task probe, int from, int count) throws Exception {
    List<UUID> created = insert(client, java.util.Collections.nCopies(count, probe));
    for (int i = 0; i < count; i++) {
      ids[from + i] = created.get(i);
    }
  }

  /** {@code count} rounds of each call in turn, one call in flight; latencies of each call. */
  private static List<JsonObject> interleaved(int count, List<Function<Integer, Future<Boolean>>> calls)
      throws Exception {
    double[][] millis = new double[calls.size()][count];
    int[] ok = new int[calls.size()];
    Promise<Void> done = Promise.promise();
    interleave(0, 0, count, calls, millis, ok, done);
    await(done.future());
    List<JsonObject> results = new ArrayList<>();
    for (int c = 0; c < calls.size(); c++) {
      double[] sorted = millis[c].clone();
      Arrays.sort(sorted);
      results.add(new JsonObject().put("calls", count).put("succeeded", ok[c])
          .put("p50_ms", round3(quantile(sorted, 0.5))).put("p90_ms", round3(quantile(sorted, 0.9)))
          .put("mean_ms", round3(Arrays.stream(sorted).average().orElse(Double.NaN))));
    }
    return results;
  }

  private static void interleave(int round, int call, int count, List<Function<Integer, Future<Boolean>>> calls,
                                 double[][] millis, int[] ok, Promise<Void> done) {
    if (round == count) {
      done.tryComplete();
      return;
    }
    long start = System.nanoTime();
    calls.get(call).apply(round).onComplete(result -> {
      millis[call][round] = (System.nanoTime() - start) / 1e6;
      if (result.succeeded() && Boolean.TRUE.equals(result.result())) {
        ok[call]++;
      }
      boolean last = call == calls.size() - 1;
      interleave(last ? round + 1 : round, last ? 0 : call + 1, count, calls, millis, ok, done);
    });
  }

  /**
   * {@code count} calls (binds, queries) starting at {@code first}, {@code inFlight} at a time, each started from
   * the completion of the one before on the event loop (no thread hand-off in the timing); latencies and rate.
   */
  private JsonObject timedRun(int first, int count, int inFlight, Function<Integer, Future<Boolean>> bind)
      throws Exception {
    double[] millis = new double[count];
    AtomicInteger next = new AtomicInteger();
    AtomicInteger bound = new AtomicInteger();
    List<Future<Void>> workers = new ArrayList<>();
    double jvmBefore = ProcessStats.jvmCpuSeconds();
    double pgBefore = ProcessStats.postgresCpuSeconds(postmaster);
    long start = System.nanoTime();
    for (int w = 0; w < inFlight; w++) {
      Promise<Void> done = Promise.promise();
      bindLoop(first, count, next, bound, millis, bind, done);
      workers.add(done.future());
    }
    await(Future.all(workers));
    double seconds = seconds(System.nanoTime() - start);
    double jvmCpu = ProcessStats.jvmCpuSeconds() - jvmBefore;
    double pgCpu = ProcessStats.postgresCpuSeconds(postmaster) - pgBefore;
    Arrays.sort(millis);
    return new JsonObject().put("calls", count).put("succeeded", bound.get()).put("per_s", round1(count / seconds))
        .put("p50_ms", round3(quantile(millis, 0.5))).put("p99_ms", round3(quantile(millis, 0.99)))
        .put("jvm_cpu_ms_per_call", round3(1000 * jvmCpu / count)).put("pg_cpu_ms_per_call", round3(1000 * pgCpu / count));
  }

  private static void bindLoop(int first, int count, AtomicInteger next, AtomicInteger bound, double[] millis,
                               Function<Integer, Future<Boolean>> bind, Promise<Void> done) {
    int i = next.getAndIncrement();
    if (i >= count) {
      done.tryComplete();
      return;
    }
    long start = System.nanoTime();
    bind.apply(first + i).onComplete(result -> {
      millis[i] = (System.nanoTime() - start) / 1e6;
      if (result.succeeded() && result.result()) {
        bound.incrementAndGet();
      }
      bindLoop(first, count, next, bound, millis, bind, done);
    });
  }

  /** pg_stat_statements, when the server preloads it: created in this database and reset; false otherwise. */
  private static boolean resetStatements(Pool client) {
    try {
      await(client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").execute());
      await(client.query("SELECT pg_stat_statements_reset()").execute());
      return true;
    } catch (Exception e) {
      return false; // not preloaded (e.g. an external server): the breakdown is left out
    }
  }

  /** The statements of this database by total server execution time during the drain (pg_stat_statements). */
  private static JsonArray topStatements(Pool client) throws Exception {
    JsonArray top = new JsonArray();
    await(client.query("SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls, total_exec_time,"
        + " mean_exec_time, rows FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database"
        + " WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 16").execute())
        .forEach(row -> {
          String query = row.getString("query");
          top.add(new JsonObject().put("query", query.length() > 160 ? query.substring(0, 157) + "..." : query)
              .put("calls", row.getLong("calls")).put("total_ms", round1(row.getDouble("total_exec_time")))
              .put("mean_ms", round3(row.getDouble("mean_exec_time"))).put("rows", row.getLong("rows")));
        });
    return top;
  }

  /** Transactions committed and rolled back in this database (pg_stat_database; its counters lag ~0.5 s). */
  private record PgStats(long commits, long rollbacks) {
    static PgStats read(Pool client) throws Exception {
      await(client.query("SELECT pg_stat_clear_snapshot()").execute());
      Row row = await(client.query("SELECT xact_commit, xact_rollback FROM pg_stat_database"
          + " WHERE datname = current_database()").execute()).iterator().next();
      return new PgStats(row.getLong("xact_commit"), row.getLong("xact_rollback"));
    }
  }

  private static double counter(PrometheusMeterRegistry registry, String name) {
    Counter counter = registry.find(name).counter();
    return counter == null ? 0 : counter.count();
  }

  private static Map<String, Double> attempts(PrometheusMeterRegistry registry) {
    Map<String, Double> counts = new LinkedHashMap<>();
    registry.find("heteroflow_scheduling_attempts").counters().forEach(counter -> counts.put(
        counter.getId().getTag("result") + "/" + counter.getId().getTag("reason"), counter.count()));
    return counts;
  }

  private static Map<String, Double> attemptsSince(PrometheusMeterRegistry registry, Map<String, Double> before) {
    Map<String, Double> delta = new LinkedHashMap<>();
    attempts(registry).forEach((key, value) -> {
      double spent = value - before.getOrDefault(key, 0.0);
      if (spent > 0) {
        delta.put(key, (double) Math.round(spent));
      }
    });
    return delta;
  }

  /** Runs {@code action} over {@code items} with at most {@code parallel} in flight. */
  static <T> Future<Void> forEachLimited(List<T> items, int parallel, Function<T, Future<?>> action) {
    AtomicInteger next = new AtomicInteger();
    List<Future<Void>> workers = new ArrayList<>();
    for (int w = 0; w < Math.min(parallel, items.size()); w++) {
      Promise<Void> done = Promise.promise();
      step(items, next, action, done);
      workers.add(done.future());
    }
    return Future.all(workers).mapEmpty();
  }

  private static <T> void step(List<T> items, AtomicInteger next, Function<T, Future<?>> action, Promise<Void> done) {
    int i = next.getAndIncrement();
    if (i >= items.size()) {
      done.tryComplete();
      return;
    }
    action.apply(items.get(i)).onSuccess(v -> step(items, next, action, done)).onFailure(done::tryFail);
  }

  static double quantile(double[] sorted, double q) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    return sorted[(int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  }

  private void log(String line) {
    if (log != null) {
      log.println("[" + scenario.name() + "] " + line.strip());
    }
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }

  static Double round1(double value) {
    return Double.isFinite(value) ? Math.round(value * 10) / 10.0 : null;
  }

  static Double round2(double value) {
    return Double.isFinite(value) ? Math.round(value * 100) / 100.0 : null;
  }

  static Double round3(double value) {
    return Double.isFinite(value) ? Math.round(value * 1000) / 1000.0 : null;
  }

  static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
