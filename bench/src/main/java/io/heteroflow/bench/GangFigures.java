package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.store.Database;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What {@code bench --scenario gangs} measures, from PostgreSQL: a watcher that looks for a partly bound group
 * every 100 ms while the burst binds ({@link Watch}), and after the drain the groups' rates, their submit→scheduled
 * latencies and where they landed ({@link #groups}).
 */
final class GangFigures {
  static final long WATCH_PERIOD_MS = 100;
  /** Binds further apart than this belong to different waves (rounds). */
  static final double WAVE_GAP_SECONDS = 0.1;

  private GangFigures() {}

  /**
   * {@link BenchSql#PARTIAL_GROUPS} every {@link #WATCH_PERIOD_MS} on a connection of its own (a tick whose
   * previous query has not answered yet is skipped, not queued): every answer must be empty, since one
   * transaction binds all of a group's members. Started before the first submit, stopped after the drain.
   */
  static final class Watch {
    private final Vertx vertx;
    private final Pool pool;
    private final long timer;
    private final long started = System.nanoTime();
    private final Set<UUID> partial = ConcurrentHashMap.newKeySet();
    private final List<Double> queryMs = new ArrayList<>();
    private volatile boolean inFlight;
    private volatile long skipped;
    private volatile long failed;
    private volatile long partialAnswers;

    private Watch(Vertx vertx, Database database) {
      this.vertx = vertx;
      this.pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(1)).connectingTo(database.options()).using(vertx)
          .build();
      this.timer = vertx.setPeriodic(WATCH_PERIOD_MS, id -> sample());
    }

    static Watch start(Vertx vertx, Database database) {
      return new Watch(vertx, database);
    }

    private void sample() {
      if (inFlight) {
        skipped++;
        return;
      }
      inFlight = true;
      query();
    }

    private Future<?> query() {
      long start = System.nanoTime();
      return pool.query(BenchSql.PARTIAL_GROUPS).execute().onComplete(done -> {
        synchronized (queryMs) {
          queryMs.add((System.nanoTime() - start) / 1e6);
        }
        if (done.failed()) {
          failed++;
        } else if (done.result().size() > 0) {
          partialAnswers++;
          done.result().forEach(row -> partial.add(row.getUUID("group_id")));
        }
        inFlight = false;
      });
    }

    /** Stops the watcher (after its last query has answered, and one more at the end) and answers what it saw. */
    JsonObject stop() throws Exception {
      vertx.cancelTimer(timer);
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (inFlight && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      await(query());
      double window = seconds(System.nanoTime() - started);
      await(pool.close());
      double[] sorted;
      synchronized (queryMs) {
        sorted = queryMs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      }
      return new JsonObject().put("period_ms", WATCH_PERIOD_MS).put("samples", sorted.length)
          .put("window_seconds", round3(window))
          .put("mean_interval_ms", sorted.length == 0 ? null : round1(window * 1000 / sorted.length))
          .put("ticks_skipped_while_a_query_ran", skipped).put("failed_queries", failed)
          .put("query_ms", new JsonObject().put("p50", round2(quantile(sorted, 0.5)))
              .put("p99", round2(quantile(sorted, 0.99))).put("max", round2(quantile(sorted, 1))))
          .put("answers_with_partial_groups", partialAnswers).put("partial_groups_seen", partial.size())
          .put("partial_group_ids", new JsonArray(partial.stream().limit(20).map(UUID::toString).toList()));
    }
  }

  /** The burst's group figures (groups and tasks named {@code name}) into {@code result}. */
  static void groups(Pool client, String name, JsonObject result) throws Exception {
    Tuple byName = Tuple.of(name);
    Row row = await(client.preparedQuery(BenchSql.GROUP_FIGURES).execute(byName)).iterator().next();
    long groups = row.getLong("groups");
    long bound = row.getLong("bound");
    Double total = row.getDouble("total");
    result.put("groups_bound", bound).put("groups_unbound", groups - bound).put("members_bound", row.getLong("members_bound"))
        .put("all_groups_bound_seconds", total == null ? null : round3(total))
        .put("groups_per_s", total == null || total <= 0 ? null : round1(bound / total))
        .put("last_group_created_seconds", round3(orNaN(row.getDouble("last_created"))))
        .put("first_group_bound_seconds", round3(orNaN(row.getDouble("first_bound"))))
        .put("group_submit_to_scheduled_ms", new JsonObject().put("p50", round1(orNaN(row.getDouble("p50")) * 1000))
            .put("p99", round1(orNaN(row.getDouble("p99")) * 1000)).put("max", round1(orNaN(row.getDouble("max")) * 1000)));

    List<Double> times = new ArrayList<>();
    await(client.preparedQuery(BenchSql.GROUP_BIND_TIMES).execute(byName)).forEach(each -> times.add(each.getDouble("t")));
    result.put("group_binds", binds(times)).put("group_bind_seconds", new JsonArray(times.stream()
        .map(BenchFigures::round3).toList()));

    Row singles = await(client.preparedQuery(BenchSql.SINGLE_FIGURES).execute(byName)).iterator().next();
    Double singleSeconds = singles.getDouble("s");
    long singlesBound = singles.getLong("bound");
    result.put("singles_bound", singlesBound).put("singles_bound_seconds", singleSeconds == null ? null
        : round3(singleSeconds)).put("singles_per_s", singleSeconds == null || singleSeconds <= 0 ? null
        : round1(singlesBound / singleSeconds));

    Row spread = await(client.preparedQuery(BenchSql.GROUP_SPREAD).execute(byName)).iterator().next();
    result.put("placement", new JsonObject().put("racks_per_group_mean", round2(spread.getDouble("racks_mean")))
        .put("nodes_per_group_mean", round2(spread.getDouble("nodes_mean")))
        .put("groups_in_fewest_racks", spread.getLong("fewest")).put("nodes_per_rack_and_vendor", spread.getLong("rack_size")));
  }

  /**
   * The pace of the groups' binds ({@code times}: seconds since the first submit, in order): groups bound in each
   * whole second from the first bind's to the last's, and in waves (a round binds its groups together; a wave
   * ends where no group was bound for {@link #WAVE_GAP_SECONDS}), each wave's rate its groups over the time since
   * the previous wave ended (the first's since the first submit); the medians of both.
   */
  static JsonObject binds(List<Double> times) {
    JsonObject binds = new JsonObject();
    if (times.isEmpty()) {
      return binds;
    }
    int first = (int) Math.floor(times.get(0));
    long[] perSecond = new long[(int) Math.floor(times.get(times.size() - 1)) - first + 1];
    times.forEach(t -> perSecond[(int) Math.floor(t) - first]++);
    List<Long> waves = new ArrayList<>();
    List<Double> waveRates = new ArrayList<>();
    double previousEnd = 0;
    int size = 0;
    for (int i = 0; i < times.size(); i++) {
      size++;
      if (i == times.size() - 1 || times.get(i + 1) - times.get(i) > WAVE_GAP_SECONDS) {
        waves.add((long) size);
        waveRates.add(size / Math.max(1e-3, times.get(i) - previousEnd));
        previousEnd = times.get(i);
        size = 0;
      }
    }
    double[] seconds = Arrays.stream(perSecond).asDoubleStream().sorted().toArray();
    double[] rates = waveRates.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return binds.put("per_second_median", round1(quantile(seconds, 0.5)))
        .put("per_second_max", round1(seconds[seconds.length - 1]))
        .put("each_second", new JsonArray(Arrays.stream(perSecond).boxed().toList()))
        .put("waves", waves.size()).put("wave_gap_s", WAVE_GAP_SECONDS)
        .put("groups_per_wave", new JsonArray(waves))
        .put("per_s_median_over_waves", round1(quantile(rates, 0.5)))
        .put("per_s_min_over_waves", round1(rates[0])).put("per_s_max_over_waves", round1(rates[rates.length - 1]));
  }

  private static double orNaN(Double value) {
    return value == null ? Double.NaN : value;
  }
}
