package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;
import static io.heteroflow.bench.BenchFutures.forEachLimited;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.GroupSpec;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.io.PrintStream;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * {@code bench --scenario gangs}: N nodes × 8 cards (in racks of 40 and four zones, one GPU vendor per zone:
 * {@link SimulatedFleet}) and a burst of G task groups of 2–16 members × 8 cards (seeded; type training, priority
 * 60, data parallel: identical members) and M single tasks of 1–8 cards (priority 50). The singles go in first, in
 * 1,000-row statements ({@link TaskRows}); then every group through {@code GroupStore.create} (its members in one
 * transaction), 16 in flight, each followed by a kick as the API's create does. Measured until no task of the
 * burst is pending (or the drain stalls or times out): the time from the first submit to the last group's bind,
 * groups per second (overall, and per second and per wave of binds: {@link GangFigures#binds}), tasks per second,
 * each group's submit→scheduled, the scheduler's own {@code heteroflow_group_decision} timer during the burst and
 * {@code GangPlanner.decide} per group on the empty cluster before it ({@link DecideProbe#groups}). A watcher asks
 * PostgreSQL every 100 ms for a partly bound group ({@link GangFigures.Watch}); after the drain the usual
 * invariants (a card held twice in the allocation history among them) and the groups' own
 * ({@link BenchSql#GANG_INVARIANTS}) are checked. The offline grace is the preempt scenario's, for its reason.
 */
final class GangBench {
  static final String NAME = "gangs";
  static final int DEFAULT_NODES = 5000;
  static final int DEFAULT_GROUPS = 300;
  static final int DEFAULT_TASKS = 2000;
  static final int MIN_MEMBERS = 2;
  static final int MAX_MEMBERS = 16;
  static final int GROUP_PRIORITY = 60;
  static final int SINGLE_PRIORITY = 50;
  private static final int CREATES_IN_FLIGHT = 16;

  /** The burst: the groups (members in rank order) and the single tasks. */
  record Mix(List<GroupSpec> groups, List<TaskMix.Task> singles) {
    int members() {
      return groups.stream().mapToInt(group -> group.members().size()).sum();
    }

    int cards() {
      return groups.stream().flatMap(group -> group.members().stream()).mapToInt(TaskSpec::gpuRequired).sum()
          + singles.stream().mapToInt(task -> task.spec().gpuRequired()).sum();
    }
  }

  private final int nodes;
  private final int groups;
  private final int singles;
  private final int maxMembers;
  private final BenchRunner.Options options;
  private final PrintStream log;

  GangBench(int nodes, int groups, int singles, int maxMembers, BenchRunner.Options options, PrintStream log) {
    this.nodes = nodes;
    this.groups = groups;
    this.singles = singles;
    this.maxMembers = maxMembers;
    this.options = options;
    this.log = log;
  }

  /** {@code groups} groups of 2..maxMembers members × 8 cards and {@code singles} tasks of 1–8 cards, seeded. */
  static Mix mix(int groups, int singles, int maxMembers, long seed) {
    Random random = new Random(seed);
    TaskSpec member = TaskMix.spec(TaskMix.NAME, "training", GROUP_PRIORITY, BenchScenario.CARDS_PER_NODE, 0,
        4.0 * BenchScenario.CARDS_PER_NODE, 32768L * BenchScenario.CARDS_PER_NODE, Map.of());
    List<GroupSpec> specs = new ArrayList<>(groups);
    for (int i = 0; i < groups; i++) {
      int size = MIN_MEMBERS + random.nextInt(maxMembers - MIN_MEMBERS + 1);
      specs.add(new GroupSpec(TaskMix.NAME, "training", null, null, 0, Collections.nCopies(size, member)));
    }
    List<TaskMix.Task> tasks = new ArrayList<>(singles);
    for (int i = 0; i < singles; i++) {
      int cards = 1 + random.nextInt(BenchScenario.CARDS_PER_NODE);
      tasks.add(new TaskMix.Task(TaskMix.spec(TaskMix.NAME, "job", SINGLE_PRIORITY, cards, 0, 4.0 * cards,
          32768L * cards, Map.of())));
    }
    return new Mix(specs, tasks);
  }

  JsonObject run(Database database) throws Exception {
    Mix mix = mix(groups, singles, maxMembers, options.seed());
    int cards = nodes * BenchScenario.CARDS_PER_NODE;
    JsonObject result = new JsonObject().put("scenario", NAME).put("nodes", nodes).put("cards", cards)
        .put("groups", groups).put("members", mix.members()).put("member_range", MIN_MEMBERS + "-" + maxMembers)
        .put("single_tasks", singles).put("tasks", mix.members() + singles).put("cards_asked", mix.cards())
        .put("cards_asked_share", round3(mix.cards() / (double) cards)).put("seed", options.seed())
        .put("date", OffsetDateTime.now(ZoneOffset.UTC).withNano(0).toString())
        .put("machine", String.join(", ", ProcessStats.describeMachine()));
    result.put("offline_grace_s", PreemptionBench.OFFLINE_GRACE_SECONDS);
    try (BenchRunner.Deployed deployed = BenchRunner.Deployed.start(database, PreemptionBench.OFFLINE_GRACE_SECONDS)) {
      Pool client = deployed.client();
      SimulatedFleet fleet = SimulatedFleet.register(deployed.vertx(), deployed.running(), nodes,
          options.heartbeatSeconds(), this::log, result);
      if (options.probes()) {
        result.put("phases", new JsonObject().put("decide_groups_empty_cluster",
            DecideProbe.groups(deployed.running(), mix.groups())));
      }
      burst(deployed.vertx(), deployed.running(), client, database, deployed.registry(), mix, result);
      fleet.stopHeartbeats();
      JsonArray violations = Invariants.check(client);
      violations.addAll(Invariants.check(client, BenchSql.GANG_INVARIANTS));
      result.put("violations", violations);
      if (!violations.isEmpty()) {
        log("  INVARIANT VIOLATIONS: " + violations.encode());
      }
      result.put("peak_rss_mb", round1(ProcessStats.peakRssMb()));
    }
    return result;
  }

  /** The burst submitted, the drain awaited with the watcher on, and what it measured into {@code result}. */
  private void burst(Vertx vertx, ControlPlane.Running running, Pool client, Database database,
                     PrometheusMeterRegistry registry, Mix mix, JsonObject result) throws Exception {
    long postmaster = ProcessStats.postmasterOf(await(client.query(BenchSql.BACKEND_PID).execute()).iterator().next()
        .getInteger("pid"));
    TimerWindow rounds = TimerWindow.open(registry, "heteroflow_round_duration");
    TimerWindow decisions = TimerWindow.open(registry, "heteroflow_group_decision");
    Map<String, Double> attemptsBefore = SchedulerMeters.attempts(registry);
    ProcessStats.Reading cpuBefore = ProcessStats.read(postmaster);
    GangFigures.Watch watch = GangFigures.Watch.start(vertx, database);

    long start = System.nanoTime();
    TaskRows.insert(client, mix.singles());
    kick(vertx, "benchmark burst");
    await(forEachLimited(mix.groups(), CREATES_IN_FLIGHT, spec -> running.stores().groups().create("default", spec)
        .onSuccess(created -> kick(vertx, "group created"))));
    double submitSeconds = seconds(System.nanoTime() - start);
    log(String.format("  %d single tasks and %d groups (%d members) submitted in %.2f s", singles, groups,
        mix.members(), submitSeconds));
    String ending = new Drain(options.stallSeconds(), this::log).awaitDrain(client, TaskMix.NAME,
        options.timeoutSeconds());
    double waited = seconds(System.nanoTime() - start);
    JsonObject watched = watch.stop();
    ProcessStats.Reading cpuAfter = ProcessStats.read(postmaster);
    TimerWindow.Stats roundStats = rounds.close();
    TimerWindow.Stats decisionStats = decisions.close();

    JsonObject drained = Drain.drainFigures(client, OffsetDateTime.now(ZoneOffset.UTC));
    Double drainSeconds = drained.getDouble("drain_seconds");
    long bound = drained.getLong("bound");
    result.put("ending", ending).put("submit_seconds", round3(submitSeconds)).put("waited_seconds", round3(waited))
        .put("tasks_bound", bound).put("tasks_unbound", mix.members() + singles - bound)
        .put("drain_seconds", drainSeconds == null ? null : round3(drainSeconds))
        .put("tasks_per_s", drainSeconds == null || drainSeconds <= 0 ? null : round1(bound / drainSeconds))
        .put("task_submit_to_scheduled_ms", new JsonObject().put("p50", drained.getValue("p50_ms"))
            .put("p99", drained.getValue("p99_ms")).put("max", drained.getValue("max_ms")));
    GangFigures.groups(client, TaskMix.NAME, result);
    result.put("watch", watched).put("partial_groups_seen", watched.getInteger("partial_groups_seen"))
        .put("rounds", roundStats.count()).put("round_p50_ms", round1(roundStats.p50Ms()))
        .put("round_p99_ms", round1(roundStats.p99Ms()))
        .put("group_decision_ms", new JsonObject().put("decisions", decisionStats.count())
            .put("mean", round1(decisionStats.meanMs())).put("p50", round1(decisionStats.p50Ms()))
            .put("p99", round1(decisionStats.p99Ms())).put("source", "heteroflow_group_decision, during the burst"))
        .put("scheduling_attempts", new JsonObject(new LinkedHashMap<>(SchedulerMeters.attemptsSince(registry,
            attemptsBefore))));
    double jvmCpu = cpuAfter.jvmCpuSeconds() - cpuBefore.jvmCpuSeconds();
    double pgCpu = cpuAfter.postgresCpuSeconds() - cpuBefore.postgresCpuSeconds();
    double others = cpuAfter.machineBusySecondsSince(cpuBefore) - jvmCpu - (Double.isFinite(pgCpu) ? pgCpu : 0);
    result.put("jvm_cpu_seconds", round3(jvmCpu)).put("pg_cpu_seconds", round3(pgCpu))
        .put("machine_busy_percent", round1(100 * cpuAfter.machineBusySince(cpuBefore)))
        .put("other_processes_cpu_seconds", round3(Math.max(0, others))).put("cores", ProcessStats.cores());
    log(String.format("  %s: %d/%d groups bound %.2f s after the first submit (%s groups/s; median over waves of"
            + " binds %s), %d/%d tasks in %.2f s (%s/s); partial groups seen by the watcher: %d in %d samples", ending,
        result.getLong("groups_bound"), groups, result.getDouble("all_groups_bound_seconds", Double.NaN),
        result.getValue("groups_per_s"), result.getJsonObject("group_binds").getValue("per_s_median_over_waves"),
        bound, mix.members() + singles, drainSeconds == null ? Double.NaN : drainSeconds,
        result.getValue("tasks_per_s"), watched.getInteger("partial_groups_seen"), watched.getInteger("samples")));
  }

  private static void kick(Vertx vertx, String why) {
    vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because(why).toJson());
  }

  private void log(String line) {
    log.println("[" + NAME + "] " + line.strip());
  }
}
