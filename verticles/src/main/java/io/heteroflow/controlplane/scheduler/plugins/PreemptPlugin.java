package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.FilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Nomination;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.Occupants;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginSetting;
import io.heteroflow.controlplane.scheduler.framework.PostFilterPlugin;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.Status;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.preemption.PlanMemo;
import io.heteroflow.controlplane.scheduler.preemption.PreemptionRules;
import io.heteroflow.controlplane.scheduler.preemption.ReclaimPlanner;
import io.heteroflow.controlplane.scheduler.preemption.VictimPlanner;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code preempt} (SPEC §6). As a PostFilter it plans preemption for a task no node could take: when the failure is
 * one victims can cure and the task may preempt ({@link PreemptionRules}), it asks the round for the active tasks
 * on the nodes ({@link Occupants#want}); decided again with them, it nominates the node of the minimal victim set
 * ({@link VictimPlanner}), which the scheduler then carries out. A task nominated earlier keeps its nomination
 * and plans nothing new while its victims stop (once they have, a task that still finds no room plans again). As a
 * Filter it holds a nominated node for its preemptor: any other task of lower or equal priority is refused there,
 * so what the victims free goes to the preemptor. A task whose queue is below its guarantee plans a reclaim first
 * ({@link ReclaimPlanner}: borrowed capacity of queues over their guarantee, victims of any priority), and falls
 * back to priority preemption only when no reclaim plan exists.
 */
public final class PreemptPlugin implements FilterPlugin, PostFilterPlugin {
  public static final String NAME = "preempt";
  public static final String STAGE = "preempt_stage";
  public static final String MIN_RUNTIME = "min_runtime_seconds";
  public static final String WAIT = "preempt_after_wait_seconds";
  public static final List<String> STAGES = List.of("disabled", "scheduled", "running");
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME,
      args -> new PreemptPlugin(new PreemptionRules(args.string(STAGE), Duration.ofSeconds(args.integer(MIN_RUNTIME)),
          Duration.ofSeconds(args.integer(WAIT)))),
      PluginSetting.oneOf(STAGE, "running", STAGES, "which victims preemption may take"),
      PluginSetting.integer(MIN_RUNTIME, 0, 0, 7 * 24 * 3600,
          "protected runtime: a task that has run less than this many seconds is not a victim"),
      PluginSetting.integer(WAIT, 0, 0, 7 * 24 * 3600,
          "a task must have waited this many seconds in the queue before it may preempt"));

  /** This round's plans by task shape (kept with the round's occupants, never in a plugin field). */
  private static final CycleState.Key<PlanMemo> PLANS = CycleState.key("preempt.plans");
  private final PreemptionRules rules;

  public PreemptPlugin(PreemptionRules rules) {
    this.rules = rules;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Status filter(TaskRequest task, NodeInfo node, Snapshot snapshot, CycleState state) {
    Nomination holder = snapshot.holding(node.id(), task);
    return holder == null ? Status.ok() : Status.reject(NAME, ReasonCode.InsufficientResources,
        "held for a preempting task of priority " + holder.priority());
  }

  @Override
  public Result postFilter(TaskRequest task, Snapshot snapshot, Refusals refusals, CycleState state) {
    Nomination earlier = snapshot.nominationOf(task.id());
    if (earlier != null && earlier.waiting()) {
      return Result.nominate(earlier.nodeId(), earlier.plan());
    }
    Occupants occupants = snapshot.occupants();
    if (occupants.now() == null || !rules.mayPreempt(task.type(), refusals.code(), task.queuedSince(), occupants.now())) {
      return Result.none();
    }
    List<String> curable = refusals.refusedWith(ReasonCode.InsufficientResources);
    if (!occupants.read()) {
      if (!curable.isEmpty()) {
        occupants.want(task);
      }
      return Result.none();
    }
    Set<String> candidates = new LinkedHashSet<>();
    for (String nodeId : curable) {
      if (!occupants.on(nodeId).isEmpty()) {
        candidates.add(nodeId);
      }
    }
    // a task within its queue's guarantee takes back borrowed capacity first, whatever its holders' priority
    String queue = occupants.shares().queueOf(task.id());
    if (queue != null && occupants.shares().mayReclaim(queue, 0)) {
      Optional<VictimPlanner.NodePlan> reclaim = ReclaimPlanner.plan(task, queue, snapshot, occupants, candidates,
          refusals::passes, rules);
      if (reclaim.isPresent()) {
        return Result.preempt(reclaim.get().node().id(), reclaim.get().all().stream().map(Occupant::taskId).toList(),
            describeReclaim(queue, reclaim.get(), occupants.shares()));
      }
    }
    return occupants.roundMemo(PLANS, PlanMemo::new).best(task, snapshot, occupants, candidates, refusals::passes,
            rules)
        .map(plan -> Result.preempt(plan.node().id(), plan.all().stream().map(Occupant::taskId).toList(),
            describe(plan)))
        .orElse(Result.none());
  }

  /** A reclaim plan in words: whose guarantee it restores, each victim's queue and how far over its share. */
  static String describeReclaim(String queue, VictimPlanner.NodePlan plan, QueueShares shares) {
    String queues = plan.all().stream().map(Occupant::queue).distinct().sorted()
        .map(victim -> String.format(Locale.ROOT, "%s (uses %.1f of its %.1f guaranteed GPU-eq)", victim,
            shares.use(victim), shares.guaranteed(victim)))
        .collect(Collectors.joining(", "));
    return String.format(Locale.ROOT, "%s%s (uses %.1f of its %.1f guaranteed GPU-eq): borrowed capacity of %s; %s",
        ReclaimPlanner.PREFIX, queue, shares.use(queue), shares.guaranteed(queue), queues, describe(plan));
  }

  /** The plan in words, for the ledger: the node, each victim and what they free together. */
  static String describe(VictimPlanner.NodePlan plan) {
    int cards = 0;
    long shardMb = 0;
    double cpu = 0;
    long memory = 0;
    for (Occupant victim : plan.victims()) {
      cards += victim.gpuIndices().size();
      shardMb += victim.holdsShard() ? victim.shardMemoryMb() : 0;
      cpu += victim.cpuCores();
      memory += victim.memoryMb();
    }
    String victims = plan.victims().stream().map(victim -> victim.taskId() + " (priority " + victim.priority() + ")")
        .collect(Collectors.joining(", "));
    String gangs = plan.elsewhere().isEmpty() ? "" : String.format(Locale.ROOT,
        "; with them, as a task group is preempted only whole, %d member(s) elsewhere: %s", plan.elsewhere().size(),
        plan.elsewhere().stream().map(member -> member.taskId().toString()).collect(Collectors.joining(", ")));
    return String.format(Locale.ROOT, "node %s, %d victim(s): %s; they free %d whole card(s), %d MB of shards,"
        + " %.1f CPU, %d MB memory%s", plan.node().id(), plan.victims().size(), victims, cards, shardMb, cpu, memory,
        gangs);
  }
}
