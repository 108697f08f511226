package io.heteroflow.bench;

import io.heteroflow.protocol.message.Kick;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;
import static io.heteroflow.bench.PgStatistics.resetStatements;
import static io.heteroflow.bench.PgStatistics.topStatements;
import static io.heteroflow.bench.SchedulerMeters.attempts;
import static io.heteroflow.bench.SchedulerMeters.attemptsSince;
import static io.heteroflow.bench.SchedulerMeters.counter;

import io.heteroflow.protocol.BusAddresses;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The measured burst: M tasks inserted in 1,000-row statements, the scheduler kicked on
 * {@link BusAddresses#SCHEDULER_KICK}, the drain awaited; then its figures into the result object: latencies from
 * the tasks table, round durations from the {@code heteroflow_round_duration} histogram (difference over the
 * drain), conflicts from {@code heteroflow_bind_conflicts}, CPU from /proc and the thread MXBean, the server time
 * of every statement from pg_stat_statements when the server preloads it.
 */
final class MeasuredBurst {
  private final BenchScenario scenario;
  private final BenchRunner.Options options;
  /** The PostgreSQL server's postmaster PID when it runs on this machine (its CPU is measured), else -1. */
  private final long postmaster;
  private final Drain drain;
  private final Consumer<String> log;

  MeasuredBurst(BenchScenario scenario, BenchRunner.Options options, long postmaster, Drain drain,
                Consumer<String> log) {
    this.scenario = scenario;
    this.options = options;
    this.postmaster = postmaster;
    this.drain = drain;
    this.log = log;
  }

  /** Inserts {@code burst}, kicks the scheduler, awaits the drain, and puts what it measured into {@code result}. */
  void run(Vertx vertx, Pool client, PrometheusMeterRegistry registry, BindTracker bindTracker, SimulatedFleet fleet,
           List<TaskMix.Task> burst, JsonObject result) throws Exception {
    boolean statements = resetStatements(client);
    bindTracker.reset();
    PgStatistics.Transactions pgBefore = PgStatistics.Transactions.read(client);
    TimerWindow rounds = TimerWindow.open(registry, "heteroflow_round_duration");
    double conflictsBefore = counter(registry, "heteroflow_bind_conflicts");
    Map<String, Double> attemptsBefore = attempts(registry);
    JfrProfile profile = options.jfrDirectory() == null ? null : JfrProfile.start(options.jfrDirectory(), scenario.name());
    ProcessStats.Reading cpuBefore = ProcessStats.read(postmaster);
    long insertStart = System.nanoTime();
    TaskRows.insert(client, burst);
    double insertSeconds = seconds(System.nanoTime() - insertStart);
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("benchmark burst").toJson());
    OffsetDateTime kickedAt = await(client.query(BenchSql.CLOCK).execute()).iterator().next()
        .getOffsetDateTime("t");
    log.accept(String.format("  %d tasks inserted in %.2f s; scheduler kicked", scenario.tasks(), insertSeconds));
    String ending = drain.awaitDrain(client, TaskMix.NAME, options.timeoutSeconds());
    ProcessStats.Reading cpuAfter = ProcessStats.read(postmaster);
    JsonObject jfr = profile == null ? null : profile.stopAndSummarise();
    TimerWindow.Stats roundStats = rounds.close();
    PgStatistics.Transactions pgAfter = PgStatistics.Transactions.read(client);
    JsonArray topStatements = statements ? topStatements(client) : null;
    JsonObject bindRequests = bindTracker.window();
    double conflicts = counter(registry, "heteroflow_bind_conflicts") - conflictsBefore;
    Map<String, Double> attemptsDuring = attemptsSince(registry, attemptsBefore);

    // what happened, from PostgreSQL
    JsonObject drained = Drain.drainFigures(client, kickedAt);
    long bound = drained.getLong("bound");
    double drainSeconds = drained.getDouble("drain_seconds", Double.NaN);
    result.put("bound", bound).put("unbound", scenario.tasks() - bound).put("ending", ending)
        .put("insert_seconds", round3(insertSeconds))
        .put("drain_seconds", round3(drainSeconds))
        .put("bound_per_s", round1(bound == 0 || !(drainSeconds > 0) ? 0 : bound / drainSeconds))
        .put("bound_per_s_after_kick", drained.getValue("bound_per_s_after_kick"))
        .put("p50_ms", drained.getValue("p50_ms")).put("p99_ms", drained.getValue("p99_ms"))
        .put("max_ms", drained.getValue("max_ms"))
        .put("latency_by_kind", drained.getJsonObject("by_kind"))
        .put("bind_interval_ms", drained.getJsonObject("bind_interval_ms"))
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
        .put("heartbeats_sent", fleet.heartbeatsSent())
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
      log.accept(String.format("  WARNING: other processes used %.1f CPU s of the %.1f s window (%d cores): the machine"
          + " was not quiet, the figures are pessimistic", others, windowSeconds, ProcessStats.cores()));
    }
    log.accept(String.format("  %s: %d/%d bound in %.2f s (%.0f/s), p50 %s ms, p99 %s ms", ending, bound,
        scenario.tasks(), drainSeconds, result.getDouble("bound_per_s"), result.getValue("p50_ms"),
        result.getValue("p99_ms")));
  }
}
