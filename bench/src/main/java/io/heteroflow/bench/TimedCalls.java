package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.quantile;
import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Timed runs of asynchronous calls (binds, queries) for the phase probe: a number of calls with a fixed number
 * in flight (latencies, rate, JVM and PostgreSQL CPU per call), or several kinds of call interleaved one at a time.
 */
final class TimedCalls {
  /** The PostgreSQL server's postmaster PID when it runs on this machine (its CPU is measured), else -1. */
  private final long postmaster;

  TimedCalls(long postmaster) {
    this.postmaster = postmaster;
  }

  /**
   * {@code count} calls (binds, queries) starting at {@code first}, {@code inFlight} at a time, each started from
   * the completion of the one before on the event loop (no thread hand-off in the timing); latencies and rate.
   */
  JsonObject timedRun(int first, int count, int inFlight, Function<Integer, Future<Boolean>> bind)
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

  /** {@code count} rounds of each call in turn, one call in flight; latencies of each call. */
  static List<JsonObject> interleaved(int count, List<Function<Integer, Future<Boolean>>> calls)
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
}
