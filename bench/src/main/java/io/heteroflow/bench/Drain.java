package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * A drain, read from the tasks table: waiting until no task of a name is pending (or the bound count stops
 * moving for {@code stallSeconds}, or a timeout passes), and the burst's drain time, throughput and
 * create→scheduled latencies.
 */
final class Drain {
  private final double stallSeconds;
  private final Consumer<String> log;

  Drain(double stallSeconds, Consumer<String> log) {
    this.stallSeconds = stallSeconds;
    this.log = log;
  }

  /** Polls every 250 ms; answers why it stopped: "drained", "stalled" or "timed out". */
  String awaitDrain(Pool client, String name, double timeoutSeconds) throws Exception {
    long start = System.nanoTime();
    long lastChange = start;
    long lastBound = -1;
    long lastLog = start;
    while (true) {
      Row row = await(client.preparedQuery(BenchSql.DRAIN_PROGRESS).execute(Tuple.of(name))).iterator().next();
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
      if (seconds(now - lastChange) > stallSeconds) {
        await(client.preparedQuery(BenchSql.STALL_REASONS).execute(Tuple.of(name))).forEach(reason -> log.accept(String.format("  stalled with %d pending (%s: %s; priority %d,"
            + " %d cards, %d MB)", reason.getLong("n"), reason.getString("code"), reason.getString("message"),
            reason.getInteger("priority"), reason.getInteger("gpus"), reason.getLong("gpu_mb"))));
        return "stalled";
      }
      if (seconds(now - start) > timeoutSeconds) {
        return "timed out";
      }
      if (seconds(now - lastLog) >= 10) {
        lastLog = now;
        log.accept(String.format("  … %d bound, %d pending after %.0f s", bound, pending, seconds(now - start)));
      }
      Thread.sleep(250);
    }
  }

  /** Drain time, throughput and create→scheduled latencies of the burst, from the tasks table. */
  static JsonObject drainFigures(Pool client, OffsetDateTime kickedAt) throws Exception {
    Tuple burst = Tuple.of(TaskMix.NAME);
    Row row = await(client.preparedQuery(BenchSql.DRAIN_FIGURES).execute(Tuple.of(kickedAt, TaskMix.NAME)))
        .iterator().next();
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
    await(client.preparedQuery(BenchSql.DRAIN_BY_KIND).execute(burst)).forEach(kind -> byKind.put(
        kind.getString("kind"), new JsonObject().put("tasks", kind.getLong("n")).put("bound", kind.getLong("bound"))
            .put("p50_ms", kind.getDouble("p50") == null ? null : round2(kind.getDouble("p50") * 1000))
            .put("p99_ms", kind.getDouble("p99") == null ? null : round2(kind.getDouble("p99") * 1000))));
    figures.put("by_kind", byKind);
    // gaps between consecutive binds (each bind transaction stamps now() = its start): the per-task cycle
    List<Double> times = new ArrayList<>();
    await(client.preparedQuery(BenchSql.BIND_TIMES).execute(burst)).forEach(r -> times.add(r.getDouble("t")));
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
}
