package io.heteroflow.launcher.simulate;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * The replay's figures per policy: mean GPU allocation over the arrival window, waits (p50 / p99, nearest rank, in
 * simulated seconds) overall, per queue and per size class, the largest wait of any gang, and the jobs set aside as
 * unplaceable or never started (neither has a wait: they are counted, not averaged in).
 */
final class ReplayReport {
  private ReplayReport() {}

  /** The waits of the started jobs that {@code which} selects, sorted. */
  static long[] waits(ReplaySimulation.Run run, Predicate<ReplayWorkload.Job> which) {
    return run.workload().jobs().stream().filter(which).mapToLong(job -> run.waits()[job.index()])
        .filter(wait -> wait >= 0).sorted().toArray();
  }

  /** Nearest-rank percentile of sorted values; -1 when there are none. */
  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return -1;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  static long largestGangWait(ReplaySimulation.Run run) {
    long[] gangs = waits(run, ReplayWorkload.Job::gang);
    return gangs.length == 0 ? -1 : gangs[gangs.length - 1];
  }

  static int neverStarted(ReplaySimulation.Run run) {
    int count = 0;
    for (ReplayWorkload.Job job : run.workload().jobs()) {
      if (run.waits()[job.index()] < 0 && !run.unplaceable()[job.index()]) {
        count++;
      }
    }
    return count;
  }

  static int unplaceable(ReplaySimulation.Run run) {
    int count = 0;
    for (boolean refused : run.unplaceable()) {
      count += refused ? 1 : 0;
    }
    return count;
  }

  /** The side-by-side table (markdown): one column per policy. */
  static String table(List<ReplaySimulation.Run> runs) {
    StringBuilder out = new StringBuilder("| | " + String.join(" | ", runs.stream().map(ReplaySimulation.Run::policy)
        .toList()) + " |\n|---|" + "---|".repeat(runs.size()) + "\n");
    row(out, "GPU allocation, mean over arrivals", runs, run -> String.format(Locale.ROOT, "%.1f %%",
        100 * run.meanUtilisation()));
    row(out, "wait p50 (all jobs)", runs, run -> duration(percentile(waits(run, job -> true), 50)));
    row(out, "wait p99 (all jobs)", runs, run -> duration(percentile(waits(run, job -> true), 99)));
    row(out, "largest gang wait", runs, run -> duration(largestGangWait(run)));
    for (String queue : ReplayWorkload.LEAVES) {
      row(out, "p50 / p99 queue " + queue + " (w " + ReplayWorkload.QUEUES.get(queue).weight() + ")", runs,
          run -> pair(waits(run, job -> job.queue().equals(queue))));
    }
    for (String size : ReplayWorkload.SIZE_CLASSES) {
      row(out, "p50 / p99 size " + size, runs, run -> pair(waits(run, job -> job.sizeClass().equals(size))));
    }
    row(out, "p50 / p99 gangs", runs, run -> pair(waits(run, ReplayWorkload.Job::gang)));
    row(out, "never started / unplaceable", runs, run -> neverStarted(run) + " / " + unplaceable(run));
    row(out, "rounds / wall time", runs, run -> String.format(Locale.ROOT, "%d / %.1f s", run.rounds(),
        run.wallSeconds()));
    return out.toString();
  }

  private static void row(StringBuilder out, String label, List<ReplaySimulation.Run> runs,
                          java.util.function.Function<ReplaySimulation.Run, String> cell) {
    out.append("| ").append(label).append(" | ")
        .append(String.join(" | ", runs.stream().map(cell).toList())).append(" |\n");
  }

  private static String pair(long[] sorted) {
    return duration(percentile(sorted, 50)) + " / " + duration(percentile(sorted, 99));
  }

  /** Seconds as "0 s", "42 s", "12.3 min", "4.5 h", "3.2 d"; "—" for none. */
  static String duration(long seconds) {
    if (seconds < 0) {
      return "—";
    }
    if (seconds < 120) {
      return seconds + " s";
    }
    if (seconds < 7200) {
      return String.format(Locale.ROOT, "%.1f min", seconds / 60.0);
    }
    if (seconds < 172_800) {
      return String.format(Locale.ROOT, "%.1f h", seconds / 3600.0);
    }
    return String.format(Locale.ROOT, "%.1f d", seconds / 86400.0);
  }

  static JsonObject json(List<ReplaySimulation.Run> runs, String trace, String placement) {
    ReplayWorkload workload = runs.get(0).workload();
    JsonArray policies = new JsonArray();
    for (ReplaySimulation.Run run : runs) {
      JsonObject queues = new JsonObject();
      for (String queue : ReplayWorkload.LEAVES) {
        queues.put(queue, stats(waits(run, job -> job.queue().equals(queue))));
      }
      JsonObject sizes = new JsonObject();
      for (String size : ReplayWorkload.SIZE_CLASSES) {
        sizes.put(size, stats(waits(run, job -> job.sizeClass().equals(size))));
      }
      List<Double> samples = new ArrayList<>();
      for (double sample : run.samples()) {
        samples.add(Math.round(sample * 10000) / 10000.0);
      }
      policies.add(new JsonObject().put("policy", run.policy())
          .put("mean_gpu_allocation", Math.round(run.meanUtilisation() * 10000) / 10000.0)
          .put("wait_seconds", stats(waits(run, job -> true))).put("wait_seconds_by_queue", queues)
          .put("wait_seconds_by_size", sizes).put("wait_seconds_gangs", stats(waits(run, ReplayWorkload.Job::gang)))
          .put("largest_gang_wait_seconds", largestGangWait(run)).put("never_started", neverStarted(run))
          .put("unplaceable", unplaceable(run)).put("partially_placed_gangs", run.partialGangs())
          .put("end_seconds", run.end()).put("rounds", run.rounds())
          .put("wall_seconds", Math.round(run.wallSeconds() * 10) / 10.0)
          .put("allocation_sample_step_seconds", run.sampleStep()).put("allocation_samples", new JsonArray(samples)));
    }
    return new JsonObject().put("trace", trace).put("placement_score", placement)
        .put("compress", workload.compress()).put("seed", workload.seed()).put("jobs", workload.jobs().size())
        .put("gangs", workload.jobs().stream().filter(ReplayWorkload.Job::gang).count())
        .put("left_out_without_scheduled_time", workload.withoutScheduledTime())
        .put("left_out_non_positive_runtime", workload.nonPositiveRuntime())
        .put("reserve_after_seconds", ReplayRound.RESERVE_AFTER.toSeconds()).put("window", ReplayRound.WINDOW)
        .put("policies", policies);
  }

  private static JsonObject stats(long[] sorted) {
    return new JsonObject().put("count", sorted.length).put("p50", percentile(sorted, 50))
        .put("p99", percentile(sorted, 99)).put("max", sorted.length == 0 ? -1 : sorted[sorted.length - 1]);
  }
}
