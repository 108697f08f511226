package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.QuotaGate;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Feasibility;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.gang.GangRequest;
import io.heteroflow.controlplane.scheduler.plan.Ending;
import io.heteroflow.controlplane.scheduler.plan.ReservationPlanner;
import io.heteroflow.controlplane.scheduler.plan.Slot;
import io.heteroflow.controlplane.scheduler.plan.Timeline;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.store.GroupSpec;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.PlanStore;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.controlplane.store.PreemptionStore;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * {@code POST /api/v1/tasks/explain} (SPEC §13, "why would my task wait?"): the body is exactly what {@code POST
 * /api/v1/tasks} takes, or what {@code POST /api/v1/groups} takes (a top-level {@code members} makes it a group),
 * decoded as strictly; nothing is created or written. The answer: where it would run now ({@code placement}, from
 * the scheduler's own pipeline on a fresh snapshot of the nodes read from PostgreSQL, with the live plugin
 * settings), or why not ({@code reason}, the text a pending task would show); the queue it would go to (resolved
 * as a submission is) with that queue's use against its quota and whether the quota would hold it back (the
 * scheduler's {@code QuotaExceeded} text); how many pending tasks and groups of that queue are ahead of it; and
 * when it could start ({@code estimated_start_at}) on a {@link Timeline} of what runs now and when it ends — not
 * of the other waiting work, which {@code queue_position} counts. Any control plane answers (not only the leader);
 * the pipeline runs on a worker thread. The leader's in-memory reservations are not seen here.
 */
final class ExplainRoutes {
  /** What the estimate considers (said in every answer). */
  static final String ESTIMATE_BASIS = "what runs now and when it is expected to end; not the other waiting work"
      + " (queue_position counts what waits ahead)";
  private final Vertx vertx;
  private final NodeStore nodes;
  private final PreemptionStore preemptions;
  private final PluginConfigStore pluginConfigs;
  private final QueueStore queues;
  private final PlanStore plans;
  private final PluginRegistry registry;
  private final SchedulingPipeline pipeline;
  private final GangPlanner gangs;
  private final int defaultTimeoutSeconds;
  private final Clock clock;

  ExplainRoutes(Vertx vertx, NodeStore nodes, PreemptionStore preemptions, PluginConfigStore pluginConfigs,
                QueueStore queues, PlanStore plans, PluginRegistry registry, SchedulerConfig config, Clock clock) {
    this.vertx = vertx;
    this.nodes = nodes;
    this.preemptions = preemptions;
    this.pluginConfigs = pluginConfigs;
    this.queues = queues;
    this.plans = plans;
    this.registry = registry;
    this.pipeline = BuiltInPlugins.pipeline(config); // the scheduler's pipeline, an instance of this API's own
    this.gangs = new GangPlanner(pipeline);
    this.defaultTimeoutSeconds = config.defaultTaskTimeout();
    this.clock = clock;
  }

  void mount(Router api) {
    api.post("/tasks/explain").handler(Http.handle(this::explain));
  }

  /** A task or a group to explain, as the scheduler would see it once submitted now. */
  private record Subject(String kind, String queue, int priority, int maxMemberCards, int cards, TaskRequest task,
                         GangRequest group) {
    List<TaskRequest> members() {
      return task != null ? List.of(task) : group.members();
    }
  }

  private Future<Reply> explain(RoutingContext ctx) {
    Buffer body = ctx.body().buffer();
    Principal principal = Http.principal(ctx);
    Instant now = clock.instant();
    Subject subject = isGroup(body) ? group(GroupSpecDecoder.decode(body, defaultTimeoutSeconds), principal, now)
        : task(TaskSpecDecoder.decode(body, defaultTimeoutSeconds), principal, now);
    return queues.list().compose(tree -> {
      String queue = QueueResolver.resolve(tree, principal, subject.queue(), subject.maxMemberCards());
      QuotaGate quotas = new QuotaGate(queues);
      Future<Snapshot> snapshot = snapshot();
      Future<PluginSet> plugins = pluginConfigs.load().map(registry::build);
      Future<List<Ending>> endings = plans.activeEndings();
      Future<Map<String, QueueStore.Usage>> usage = queues.usage();
      Future<QueueStore.Ahead> ahead = queues.ahead(queue, subject.priority());
      return Future.all(List.of(snapshot, plugins, endings, usage, ahead, quotas.read(tree)))
          .compose(read -> vertx.executeBlocking(() -> decide(subject, queue, quotas, snapshot.result(),
              plugins.result(), endings.result(), now), false))
          .map(answer -> Reply.ok(answer
              .put("queue", queueView(tree, queue, usage.result(), answer.remove("quota")))
              .put("queue_position", new JsonObject().put("ahead", ahead.result().total())
                  .put("tasks_ahead", ahead.result().tasks()).put("groups_ahead", ahead.result().groups()))));
    });
  }

  /** The nodes, the tenant boundary and the live nominations as the leader's next round reads them. */
  private Future<Snapshot> snapshot() {
    return Future.all(nodes.snapshotNodes(), nodes.tenantBoundary(),
        preemptions.liveNominations()).map(read -> {
          Snapshot snapshot = new Snapshot(read.resultAt(0), read.resultAt(1));
          snapshot.nominations(read.resultAt(2));
          return snapshot;
        });
  }

  /** The scheduler's decision for the subject (worker thread), in the order a round takes: quota, pipeline, quota. */
  private JsonObject decide(Subject subject, String queue, QuotaGate quotas, Snapshot snapshot, PluginSet plugins,
                            List<Ending> endings, Instant now) {
    JsonObject answer = new JsonObject().put("kind", subject.kind())
        .put("snapshot", new JsonObject().put("nodes", snapshot.size()).put("at", now.toString()));
    String blocked = quotas.blocked(queue, subject.cards());
    ReasonCode code = blocked == null ? null : ReasonCode.QuotaExceeded;
    String message = blocked;
    JsonObject placement = null;
    if (blocked == null && subject.task() != null) {
      Decision decision = pipeline.decide(subject.task(), snapshot, plugins);
      if (decision.isPlaced()) {
        String over = quotas.admit(queue, decision, snapshot);
        code = over == null ? null : ReasonCode.QuotaExceeded;
        message = over;
        placement = over == null ? placed(decision) : null;
      } else {
        code = decision.code();
        message = decision.message();
      }
    } else if (blocked == null) {
      GangPlanner.GangDecision decision = gangs.decide(subject.group(), snapshot, plugins);
      if (decision.placed()) {
        double need = decision.placements().stream().mapToDouble(each -> quotas.need(each.decision(), snapshot)).sum();
        String over = quotas.admit(queue, need, decision.placements().size());
        code = over == null ? null : ReasonCode.QuotaExceeded;
        message = over;
        if (over == null) {
          JsonArray members = new JsonArray();
          decision.placements().forEach(each -> members.add(placed(each.decision()).put("rank", each.rank())));
          placement = new JsonObject().put("path", decision.path().name().toLowerCase()).put("members", members);
        } else {
          GangPlanner.undo(decision, snapshot);
        }
      } else {
        code = decision.code();
        message = decision.message();
      }
    }
    answer.put("placement", placement)
        .put("reason", code == null ? null : new JsonObject().put("code", code.name()).put("message", message))
        .put("quota", code == ReasonCode.QuotaExceeded ? message : null);
    estimate(answer, subject, code, snapshot, plugins, endings, now);
    return answer;
  }

  /** When it could start: now when placed, else the earliest slot on a timeline of what runs now, or a note. */
  private void estimate(JsonObject answer, Subject subject, ReasonCode code, Snapshot snapshot, PluginSet plugins,
                        List<Ending> endings, Instant now) {
    String note = null;
    Instant at = null;
    if (code == null) {
      at = now;
    } else if (code == ReasonCode.QuotaExceeded) {
      note = "cannot be known: it waits for its queue's quota, not for capacity";
    } else if (!Feasibility.CAPACITY.contains(code) && code != ReasonCode.GangIncomplete) {
      note = "cannot be known: no node could take it as the fleet is (" + code + ")";
    } else {
      List<Timeline.Member> members = subject.members().stream().map(member -> new Timeline.Member(member,
          pipeline.feasibility(member, snapshot, plugins).eligibleOnceFreed())).toList();
      Slot slot = new Timeline(snapshot.nodeViews(), endings, now).earliest(members);
      at = slot == null ? null : slot.start();
      note = slot == null ? ReservationPlanner.UNKNOWN : null;
    }
    answer.put("estimated_start_at", at == null ? null : at.truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
        .toString()).put("estimate_note", note).put("estimate_considers", ESTIMATE_BASIS);
  }

  private static JsonObject placed(Decision decision) {
    return new JsonObject().put("node", decision.nodeId())
        .put("gpus", new JsonArray(List.copyOf(decision.gpuIndices())))
        .put("shard", decision.shard() == null ? null : Shard.toJson(decision.shard().toWire()))
        .put("score", decision.score());
  }

  /** The queue it would go to, its use against its quota (as GET /queues shows it) and what the quota says. */
  private static JsonObject queueView(List<QueueRecord> tree, String name, Map<String, QueueStore.Usage> own,
                                      Object quota) {
    QueueRecord queue = tree.stream().filter(each -> each.name().equals(name)).findFirst().orElseThrow();
    return QueueRoutes.view(queue, own.getOrDefault(name, QueueStore.Usage.NONE),
            QueueResolver.subtree(name, tree, own))
        .put("quota", new JsonObject().put("blocks", quota != null).put("message", quota));
  }

  /** A group spec has {@code members}; anything else (also a body that is not JSON) is decoded as a task. */
  private static boolean isGroup(Buffer body) {
    try {
      return new JsonObject(body).containsKey("members");
    } catch (RuntimeException notAnObject) {
      return false;
    }
  }

  private static Subject task(TaskSpec spec, Principal principal, Instant now) {
    TaskRequest request = request(spec, principal, now);
    return new Subject("task", spec.queue(), spec.priority(), spec.gpuRequired(), spec.gpuRequired(), request, null);
  }

  private static Subject group(GroupSpec spec, Principal principal, Instant now) {
    List<TaskRequest> members = spec.members().stream().map(member -> request(member, principal, now)).toList();
    GangRequest group = new GangRequest(UUID.randomUUID(), principal.tenant(), spec.priority(), now, spec.gpuType(),
        spec.parallelism(), members);
    int cards = members.stream().mapToInt(TaskRequest::gpuRequired).sum();
    return new Subject("group", spec.queue(), spec.priority(), spec.maxMemberCards(), cards, null, group);
  }

  /** The request the scheduler would decide for {@code spec} submitted now (TaskRecord.toRequest's fields). */
  private static TaskRequest request(TaskSpec spec, Principal principal, Instant now) {
    int runtime = spec.expectedRuntimeSeconds() != null ? spec.expectedRuntimeSeconds() : spec.timeoutSeconds();
    return new TaskRequest(UUID.randomUUID(), principal.tenant(), spec.type(), spec.priority(), spec.gpuRequired(),
        spec.gpuMemoryMb(), spec.gpuType(), spec.gpuModels(), spec.cpuCores(), spec.memoryMb(), spec.nodeSelector(),
        spec.labels(), now, runtime, spec.timeoutSeconds(), spec.preemptible());
  }
}
