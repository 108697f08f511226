package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round2;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.heteroflow.controlplane.store.Database;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
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
      long start = System.nanoTime();
      pool.query(BenchSql.PARTIAL_GROUPS).execute().onComplete(done -> {
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

    /** Stops the watcher (after its last query has answered) and answers what it saw. */
    JsonObject stop() throws Exception {
      vertx.cancelTimer(timer);
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (inFlight && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
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

    List<Long> perSecond = new ArrayList<>();
    await(client.preparedQuery(BenchSql.GROUPS_PER_SECOND).execute(byName)).forEach(each -> perSecond.add(each.getLong("n")));
    double[] sorted = perSecond.stream().mapToDouble(Long::doubleValue).sorted().toArray();
    result.put("groups_per_s_median", round1(quantile(sorted, 0.5)))
        .put("groups_per_s_max", sorted.length == 0 ? null : round1(sorted[sorted.length - 1]))
        .put("groups_bound_each_second", new JsonArray(new ArrayList<>(perSecond)));

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

  private static double orNaN(Double value) {
    return value == null ? Double.NaN : value;
  }
}
