package io.heteroflow.bench;

import io.heteroflow.protocol.message.Kick;
import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * What runs before the measured burst: warm-up waves of the same mix through the whole path, released
 * afterwards (the JIT compiles the hot paths), and the half-load phase, tasks created one by one through
 * TaskStore.create with a kick each, as the API does, at half the warm rate.
 */
final class WarmUpAndHalfLoad {
  static final String WARMUP_NAME = "bench-warmup";
  static final String HALF_LOAD_NAME = "bench-half-load";
  /** The half-load phase's first second of arrivals is not measured (see halfLoad). */
  static final double LEAD_IN_SECONDS = 1;

  private final BenchScenario scenario;
  private final BenchRunner.Options options;
  private final Drain drain;
  private final Consumer<String> log;
  private double warmRate;

  WarmUpAndHalfLoad(BenchScenario scenario, BenchRunner.Options options, Drain drain, Consumer<String> log) {
    this.scenario = scenario;
    this.options = options;
    this.drain = drain;
    this.log = log;
  }

  /** Tasks bound per second in the last warm-up wave (the warm control plane's rate), 0 before. */
  double warmRate() {
    return warmRate;
  }

  /**
   * {@code warmupTasks} tasks of the same mix, inserted, kicked and drained like the burst, then released
   * (scheduled → failed through TaskStore, which returns their cards), and the tables vacuumed (as autovacuum
   * would have done in a long-running cluster): the measured burst then meets compiled code, not the
   * interpreter, on an empty fleet. Also gives the warm rate that the half-load phase halves.
   */
  void warmUp(ControlPlane.Running controlPlane, Vertx vertx, Pool client, JsonObject result) throws Exception {
    // waves that fit in half the fleet's cards, at most 1,000 tasks each
    int wave = (int) Math.max(1, Math.min(1000, scenario.cards() * 0.5 / TaskMix.CARDS_PER_TASK));
    long start = System.nanoTime();
    int bound = 0;
    int waves = 0;
    for (int done = 0; done < options.warmupTasks(); done += wave) {
      bound += warmUpWave(controlPlane, vertx, client, Math.min(wave, options.warmupTasks() - done), waves++);
    }
    double seconds = seconds(System.nanoTime() - start);
    log.accept(String.format("  warm-up: %d tasks in %d waves, %d bound (last wave %.0f/s), released, in %.1f s",
        options.warmupTasks(), waves, bound, warmRate, seconds));
    result.put("warmup_tasks", options.warmupTasks()).put("warmup_bound", bound)
        .put("warmup_seconds", round3(seconds)).put("warmup_last_wave_per_s", round1(warmRate));
  }

  private int warmUpWave(ControlPlane.Running controlPlane, Vertx vertx, Pool client, int tasks, int wave) throws Exception {
    TaskRows.insert(client, TaskMix.generate(WARMUP_NAME, tasks, options.seed() + 1 + wave));
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("benchmark warm-up").toJson());
    drain.awaitDrain(client, WARMUP_NAME, Math.min(options.timeoutSeconds(), 300));
    Row rate = await(client.preparedQuery(BenchSql.SCHEDULED_RATE).execute(Tuple.of(WARMUP_NAME))).iterator().next();
    if (rate.getLong("n") > 0 && rate.getDouble("s") != null && rate.getDouble("s") > 0) {
      warmRate = rate.getLong("n") / rate.getDouble("s");
    }
    TaskRows.release(controlPlane, client, WARMUP_NAME);
    return (int) (long) rate.getLong("n");
  }

  /**
   * Tasks of the same mix (8-card gangs asking 4 cards instead, see TaskMix) arriving at {@code rate} per second
   * for {@code halfLoadSeconds} (capped to fit in 40 % of the cards), each created through TaskStore.create and
   * announced with a kick carrying its id, exactly what the API does. Latency runs from the moment the create
   * was submitted (this clock) to the task's scheduled_at (PostgreSQL's clock, the same machine's), so time a
   * create waits before its transaction starts counts too; the create's own answer time is reported beside it.
   * The first {@link #LEAD_IN_SECONDS} of arrivals (at most a fifth of them) are a lead-in, bound but not
   * measured: the warm-up's release has just changed thousands of nodes at once, which the first rounds'
   * decision memo catches up with, and the warm-up did not run the create path. Released afterwards.
   */
  JsonObject halfLoad(ControlPlane.Running controlPlane, Vertx vertx, Pool client, double rate) throws Exception {
    int total = (int) Math.max(1, Math.min(rate * (LEAD_IN_SECONDS + options.halfLoadSeconds()),
        scenario.cards() * 0.4 / TaskMix.CARDS_PER_TASK));
    int leadIn = (int) Math.min(Math.round(rate * LEAD_IN_SECONDS), total / 5);
    List<TaskMix.Task> tasks = TaskMix.generate(HALF_LOAD_NAME, total, options.seed() + 100, 4);
    AtomicInteger next = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    Map<UUID, Long> submittedMicros = new ConcurrentHashMap<>(); // measured tasks only
    double[] answerMs = new double[total - leadIn];
    Promise<Void> submitted = Promise.promise();
    AtomicInteger outstanding = new AtomicInteger(total);
    long start = System.nanoTime();
    vertx.setPeriodic(2, timer -> {
      int due = (int) Math.min(total, Math.floor(seconds(System.nanoTime() - start) * rate) + 1);
      while (next.get() < due) {
        int index = next.getAndIncrement();
        long submittedAt = epochMicros(Instant.now());
        long submittedNanos = System.nanoTime();
        controlPlane.stores().tasks().create("default", tasks.get(index).spec(), null, "half-load")
            .onSuccess(created -> {
              if (index >= leadIn) {
                answerMs[index - leadIn] = (System.nanoTime() - submittedNanos) / 1e6;
                submittedMicros.put(created.task().id(), submittedAt);
              }
              vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK,
                  Kick.task(created.task().id()).toJson());
            })
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
    String ending = drain.awaitDrain(client, HALF_LOAD_NAME, Math.min(options.timeoutSeconds(), 300));
    RowSet<Row> rows = await(client.preparedQuery(BenchSql.SCHEDULED_AT).execute(Tuple.of(HALF_LOAD_NAME)));
    double[] latencyMs = new double[submittedMicros.size()];
    int bound = 0;
    for (Row row : rows) {
      Long submittedAt = submittedMicros.get(row.getUUID("id"));
      if (submittedAt != null) {
        latencyMs[bound++] = (epochMicros(row.getOffsetDateTime("scheduled_at").toInstant()) - submittedAt) / 1000.0;
      }
    }
    latencyMs = Arrays.copyOf(latencyMs, bound);
    Arrays.sort(latencyMs);
    Arrays.sort(answerMs);
    TaskRows.release(controlPlane, client, HALF_LOAD_NAME);
    JsonObject figures = new JsonObject().put("target_rate_per_s", round1(rate)).put("tasks", total - leadIn)
        .put("lead_in_tasks", leadIn).put("failed_creates", failed.get()).put("ending", ending).put("bound", bound)
        .put("achieved_rate_per_s", round1((total - 1) / submitSeconds))
        .put("submit_seconds", round3(submitSeconds))
        .put("create_answer_p50_ms", round2(quantile(answerMs, 0.5)))
        .put("create_answer_p99_ms", round2(quantile(answerMs, 0.99)));
    if (bound > 0) {
      figures.put("p50_ms", round2(quantile(latencyMs, 0.5))).put("p99_ms", round2(quantile(latencyMs, 0.99)))
          .put("max_ms", round2(latencyMs[latencyMs.length - 1]));
    }
    log.accept(String.format("  half load: %d tasks at %.0f/s after a lead-in of %d: submit→scheduled p50 %s ms,"
            + " p99 %s ms (create answered p50 %s ms, p99 %s ms; %s)", total - leadIn, rate, leadIn,
        figures.getValue("p50_ms"),
        figures.getValue("p99_ms"), figures.getValue("create_answer_p50_ms"),
        figures.getValue("create_answer_p99_ms"), ending));
    return figures;
  }

  private static long epochMicros(Instant instant) {
    return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1000;
  }
}
