package io.heteroflow.launcher.bench;

import static io.heteroflow.launcher.bench.BenchFigures.round1;
import static io.heteroflow.launcher.bench.BenchFigures.round2;
import static io.heteroflow.launcher.bench.BenchFigures.round3;
import static io.heteroflow.launcher.bench.BenchFigures.seconds;
import static io.heteroflow.launcher.bench.BenchFutures.await;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
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

  private final BenchScenario scenario;
  private final BenchRunner.Options options;
  private final Drain drain;
  private final Consumer<String> log;
  /** Tasks bound per second in the last warm-up wave (the warm control plane's rate), 0 before. */
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
  void warmUp(Services services, Vertx vertx, Pool client, JsonObject result) throws Exception {
    // waves that fit in half the fleet's cards, at most 1,000 tasks each
    int wave = (int) Math.max(1, Math.min(1000, scenario.cards() * 0.5 / TaskMix.CARDS_PER_TASK));
    long start = System.nanoTime();
    int bound = 0;
    int waves = 0;
    for (int done = 0; done < options.warmupTasks(); done += wave) {
      bound += warmUpWave(services, vertx, client, Math.min(wave, options.warmupTasks() - done), waves++);
    }
    double seconds = seconds(System.nanoTime() - start);
    log.accept(String.format("  warm-up: %d tasks in %d waves, %d bound (last wave %.0f/s), released, in %.1f s",
        options.warmupTasks(), waves, bound, warmRate, seconds));
    result.put("warmup_tasks", options.warmupTasks()).put("warmup_bound", bound)
        .put("warmup_seconds", round3(seconds)).put("warmup_last_wave_per_s", round1(warmRate));
  }

  private int warmUpWave(Services services, Vertx vertx, Pool client, int tasks, int wave) throws Exception {
    TaskRows.insert(client, TaskMix.generate(WARMUP_NAME, tasks, options.seed() + 1 + wave));
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, new JsonObject().put("reason", "benchmark warm-up"));
    drain.awaitDrain(client, WARMUP_NAME, Math.min(options.timeoutSeconds(), 300));
    Row rate = await(client.query("SELECT count(*) AS n, extract(epoch FROM max(scheduled_at) - min(created_at))::float8"
        + " AS s FROM tasks WHERE name = '" + WARMUP_NAME + "' AND status = 'scheduled'").execute()).iterator().next();
    if (rate.getLong("n") > 0 && rate.getDouble("s") != null && rate.getDouble("s") > 0) {
      warmRate = rate.getLong("n") / rate.getDouble("s");
    }
    TaskRows.release(services, client, WARMUP_NAME);
    return (int) (long) rate.getLong("n");
  }

  /**
   * Tasks of the same mix (8-card gangs asking 4 cards instead, see TaskMix) arriving at {@code rate} per second for {@code halfLoadSeconds} (capped to fit in
   * 40 % of the cards), each created through TaskStore.create and announced with a kick carrying its id,
   * exactly what the API does; then create→scheduled from the tasks table. Released afterwards.
   */
  JsonObject halfLoad(Services services, Vertx vertx, Pool client, double rate) throws Exception {
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
    String ending = drain.awaitDrain(client, HALF_LOAD_NAME, Math.min(options.timeoutSeconds(), 300));
    Row row = await(client.query("SELECT count(scheduled_at) AS bound,"
        + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
        + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99,"
        + " max(extract(epoch FROM scheduled_at - created_at))::float8 AS max,"
        + " extract(epoch FROM max(created_at) - min(created_at))::float8 AS span"
        + " FROM tasks WHERE name = '" + HALF_LOAD_NAME + "'").execute()).iterator().next();
    TaskRows.release(services, client, HALF_LOAD_NAME);
    JsonObject figures = new JsonObject().put("target_rate_per_s", round1(rate)).put("tasks", total)
        .put("failed_creates", failed.get()).put("ending", ending).put("bound", row.getLong("bound"))
        .put("achieved_rate_per_s", round1(row.getDouble("span") == null || row.getDouble("span") <= 0 ? Double.NaN
            : (total - 1) / row.getDouble("span")))
        .put("submit_seconds", round3(submitSeconds));
    if (row.getLong("bound") > 0) {
      figures.put("p50_ms", round2(row.getDouble("p50") * 1000)).put("p99_ms", round2(row.getDouble("p99") * 1000))
          .put("max_ms", round2(row.getDouble("max") * 1000));
    }
    log.accept(String.format("  half load: %d tasks at %.0f/s: p50 %s ms, p99 %s ms (%s)", total, rate,
        figures.getValue("p50_ms"), figures.getValue("p99_ms"), ending));
    return figures;
  }
}
