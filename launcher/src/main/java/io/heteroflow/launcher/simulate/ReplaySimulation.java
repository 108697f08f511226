package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShape;
import io.heteroflow.controlplane.scheduler.plugins.frag.TaskShapeMix;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.Set;

/**
 * The replay with departures, event by event in simulated seconds: at each time something arrives or departs, the
 * departures free what they held, the arrivals join the pending list, and one {@link ReplayRound} runs. A round at a
 * time when nothing departed tries only the new arrivals (nothing was freed, so what could not start before cannot
 * start now). It runs until every job has started and departed. A job that fits nowhere even on the empty cluster
 * is set aside at arrival and counted ({@code unplaceable}); it has no wait. Recorded: each job's wait (start -
 * arrival), the GPU allocation (milli-GPU allocated / capacity) sampled {@link #SAMPLES} times over the arrival window
 * [0, last arrival], and its exact time-average over that window.
 */
final class ReplaySimulation {
  static final int SAMPLES = 200;

  private ReplaySimulation() {}

  /** One policy's run. {@code waits} by job index (-1: never started); utilisation in [0, 1]. */
  record Run(String policy, ReplayWorkload workload, long[] waits, boolean[] unplaceable, double[] samples,
             long sampleStep, double meanUtilisation, long end, int rounds, double wallSeconds, int partialGangs) {
  }

  static Run run(Trace trace, ReplayWorkload workload, String policy, String placement) {
    long began = System.nanoTime();
    List<ReplayWorkload.Job> jobs = workload.jobs();
    TaskShapeMix mix = TaskShapeMix.fixed(trace.pods().stream().map(pod -> TaskShape.of(pod.task())).toList());
    PluginSet plugins = TraceSimulation.plugins(TraceSimulation.registry(mix), placement);
    SchedulingPipeline pipeline = BuiltInPlugins.pipeline(TraceSimulation.CONFIG);
    ReplayCluster cluster = new ReplayCluster(TraceSimulation.inRandomOrder(trace.nodes(), new Random(workload.seed())));
    ReplayRound round = new ReplayRound(policy, cluster, pipeline, plugins);
    boolean[] unplaceable = unplaceable(jobs, trace, pipeline, plugins, workload.seed());

    long horizon = jobs.isEmpty() ? 0 : jobs.get(jobs.size() - 1).arrival();
    long step = Math.max(1, horizon / SAMPLES);
    double[] samples = new double[SAMPLES + 1];
    int nextSample = 0;
    double integral = 0;
    long last = 0;

    long[] waits = new long[jobs.size()];
    java.util.Arrays.fill(waits, -1);
    PriorityQueue<ReplayCluster.Started> departures = new PriorityQueue<>(
        Comparator.comparingLong(ReplayCluster.Started::end).thenComparingInt(s -> s.job().index()));
    List<ReplayWorkload.Job> pending = new ArrayList<>();
    int next = 0;
    int rounds = 0;
    int partial = 0;
    while (next < jobs.size() || !departures.isEmpty()) {
      long now = Math.min(next < jobs.size() ? jobs.get(next).arrival() : Long.MAX_VALUE,
          departures.isEmpty() ? Long.MAX_VALUE : departures.peek().end());
      double utilisation = cluster.utilisation();
      while (nextSample <= SAMPLES && nextSample * step <= Math.min(now, horizon)) {
        samples[nextSample++] = utilisation;
      }
      if (last < horizon) {
        integral += utilisation * (Math.min(now, horizon) - last);
      }
      last = now;
      boolean departed = false;
      while (!departures.isEmpty() && departures.peek().end() == now) {
        cluster.departed(departures.poll());
        departed = true;
      }
      Set<ReplayWorkload.Job> arrived = new LinkedHashSet<>();
      while (next < jobs.size() && jobs.get(next).arrival() == now) {
        ReplayWorkload.Job job = jobs.get(next++);
        if (!unplaceable[job.index()]) {
          pending.add(job);
          arrived.add(job);
        }
      }
      if (pending.isEmpty()) {
        continue;
      }
      rounds++;
      Set<ReplayWorkload.Job> gone = new java.util.HashSet<>();
      for (ReplayCluster.Started started : round.run(now, pending, departed ? new LinkedHashSet<>(pending) : arrived)) {
        waits[started.job().index()] = now - started.job().arrival();
        gone.add(started.job());
        departures.add(started);
        if (started.placements().size() != started.job().members().size()) {
          partial++;
        }
      }
      pending.removeIf(gone::contains);
    }
    double mean = horizon == 0 ? cluster.utilisation() : integral / horizon;
    return new Run(policy, workload, waits, unplaceable, samples, step, mean, last, rounds,
        (System.nanoTime() - began) / 1e9, partial);
  }

  /** The jobs no node (or, for a gang, no set of nodes) could take even on the empty cluster. */
  static boolean[] unplaceable(List<ReplayWorkload.Job> jobs, Trace trace, SchedulingPipeline pipeline,
                               PluginSet plugins, long seed) {
    Snapshot empty = new Snapshot(TraceSimulation.inRandomOrder(trace.nodes(), new Random(seed)));
    GangPlanner gangs = new GangPlanner(pipeline);
    boolean[] refused = new boolean[jobs.size()];
    Map<Object, Boolean> byShape = new HashMap<>();
    for (ReplayWorkload.Job job : jobs) {
      Object key = List.of(job.members().get(0).shape().withTenure(0, 0, false), job.members().size());
      refused[job.index()] = byShape.computeIfAbsent(key, k -> {
        if (!job.gang()) {
          return pipeline.feasibility(job.members().get(0), empty, plugins).feasibleCount() == 0;
        }
        GangPlanner.GangDecision decision = gangs.decide(new GangRequest(job.id(), "trace", 50,
            Instant.ofEpochSecond(job.arrival()), null, null, job.members()), empty, plugins);
        if (decision.placed()) {
          GangPlanner.undo(decision, empty);
        }
        return !decision.placed();
      });
    }
    return refused;
  }
}
