package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.PluginConfigStore;
import io.heteroflow.controlplane.store.PreemptionStore;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.GroupStore;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.PlanStore;
import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.gang.GangPlanner;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.controlplane.scheduler.BindDispatcher.Decided;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.BusMessage;
import io.heteroflow.protocol.message.BusPayload;
import io.heteroflow.protocol.message.Kick;
import io.heteroflow.protocol.message.LeadershipChange;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The main scheduling beat (SPEC §2): a round takes up to 200 pending tasks in queue order (a scan cursor
 * carries on in the next round), reads one snapshot, runs the plain-Java pipeline for each task on a worker
 * (staging each decision on the snapshot), lets {@link Preemptions} plan and carry out preemption for those that
 * found no node, and hands the placements to the {@link BindDispatcher}, which binds
 * them in a few batch transactions while the next round already decides. The snapshot is kept between rounds
 * ({@link SnapshotCache}). The immediate channel: a created task's id is queued (at most 1000; beyond that the
 * queue scan finds it) and kicks a round at once, which takes it along with the next batch; a preemptor whose victims
 * have all stopped joins the next round the same way. The 5 s tick is the longest
 * gap, and while a pass over the queue keeps binding, rounds run back to back (each yields the event loop).
 */
public final class SchedulerLoopVerticle extends VerticleBase {
  public static final int BATCH = 200;
  public static final long TICK_MS = 5000;
  public static final int IMMEDIATE_CAPACITY = 1000;
  /** After a refused bind the task is tried again this soon (its node is read again first). */
  static final long RETRY_MS = 20;
  private static final Logger LOG = Logger.getLogger(SchedulerLoopVerticle.class.getName());

  private final TaskStore tasks;
  private final NodeStore nodes;
  private final PluginConfigStore pluginConfigs;
  private final PreemptionStore preemptionStore;
  private final GroupStore groupStore;
  private final QueueStore queueStore;
  private final QuotaGate quotas;
  private final Reserving reserving;
  private final FairShareOrder fairShare;
  private final PluginRegistry registry;
  private final SchedulingPipeline pipeline;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final Clock clock;
  private final int preemptTimeoutSeconds;
  private boolean running;
  private boolean kicked;
  private boolean boundThisPass;
  private TaskStore.Cursor cursor;
  private SnapshotCache snapshots;
  private BindDispatcher binds;
  private Preemptions preemptions;
  private GangScheduling gangs;
  private final Deque<UUID> immediate = new ArrayDeque<>();

  public SchedulerLoopVerticle(TaskStore tasks, NodeStore nodes, PreemptionStore preemptionStore, GroupStore groupStore,
                               QueueStore queueStore, PlanStore planStore, QueueingConfig queueing,
                               PluginConfigStore pluginConfigs, PluginRegistry registry, SchedulingPipeline pipeline,
                               Leadership leadership, ControlPlaneMetrics metrics, Clock clock,
                               int preemptTimeoutSeconds) {
    this.tasks = tasks;
    this.nodes = nodes;
    this.pluginConfigs = pluginConfigs;
    this.preemptionStore = preemptionStore;
    this.groupStore = groupStore;
    this.queueStore = queueStore;
    this.quotas = new QuotaGate(queueStore, queueing, clock);
    this.fairShare = new FairShareOrder(queueStore, planStore);
    this.reserving = new Reserving(planStore, pipeline, clock, Duration.ofSeconds(queueing.reserveAfterSeconds()));
    this.registry = registry;
    this.pipeline = pipeline;
    this.leadership = leadership;
    this.metrics = metrics;
    this.clock = clock;
    this.preemptTimeoutSeconds = preemptTimeoutSeconds;
  }

  /** Completes once its consumers are registered (on the clustered bus: known to every member). */
  @Override
  public Future<?> start() {
    snapshots = new SnapshotCache(nodes, preemptionStore, pluginConfigs, registry, clock);
    binds = new BindDispatcher(vertx, tasks, leadership, metrics, clock, snapshots,
        () -> vertx.setTimer(RETRY_MS, id -> requestRound()));
    preemptions = new Preemptions(vertx, preemptionStore, tasks, pipeline, leadership, metrics,
        preemptTimeoutSeconds);
    gangs = new GangScheduling(vertx, groupStore, new GangPlanner(pipeline), leadership, metrics, snapshots,
        () -> vertx.setTimer(RETRY_MS, id -> requestRound()));
    Future<Void> kicks = vertx.eventBus().consumer(BusAddresses.SCHEDULER_KICK,
        message -> BusPayload.answer(message, Kick::fromJson, kick -> {
          if (kick.taskId() != null && immediate.size() < IMMEDIATE_CAPACITY) {
            immediate.add(kick.taskId());
          }
          requestRound();
          return Future.<BusMessage>succeededFuture();
        })).completion();
    vertx.setPeriodic(TICK_MS, id -> requestRound());
    Future<Void> leaders = vertx.eventBus().consumer(BusAddresses.LEADERSHIP_CHANGED,
        message -> BusPayload.answer(message, LeadershipChange::fromJson, change -> {
          metrics.leaderChanged();
          snapshots.reset();
          if (leadership.leading()) {
            cursor = null;
            requestRound();
          }
          return Future.<BusMessage>succeededFuture();
        })).completion();
    requestRound();
    return Future.all(kicks, leaders);
  }

  private void requestRound() {
    if (!leadership.leading()) {
      return;
    }
    if (running) {
      kicked = true;
      return;
    }
    running = true;
    kicked = false;
    Instant started = clock.instant();
    round().onComplete(result -> {
      running = false;
      metrics.round(Duration.between(started, clock.instant()));
      if (result.failed()) {
        LOG.log(Level.WARNING, "scheduling round failed; the next tick retries", result.cause());
      }
      if (kicked || (result.succeeded() && result.result())) {
        vertx.setTimer(1, id -> requestRound());
      }
    });
  }

  /** One bounded round; answers whether another round should follow at once. */
  private Future<Boolean> round() {
    Future<PluginSet> plugins = snapshots.plugins();
    for (UUID nominee : snapshots.readyNominees()) {
      if (immediate.size() < IMMEDIATE_CAPACITY && !immediate.contains(nominee)) {
        immediate.addFirst(nominee);
      }
    }
    List<UUID> fresh = new ArrayList<>();
    while (!immediate.isEmpty() && fresh.size() < BATCH / 2) {
      fresh.add(immediate.poll());
    }
    binds.beginQueueRead();
    Future<List<TaskRecord>> freshTasks = tasks.pendingAmong(fresh);
    Future<List<TaskRecord>> batch = tasks.pending(cursor, BATCH - fresh.size());
    Future<List<GangScheduling.Gang>> groups = gangs.read();
    // the queue tree is read once for both views of the queues (quotas, fair share)
    Future<List<QueueRecord>> tree = queueStore.list();
    Future<Void> quotaView = tree.compose(quotas::read);
    Future<List<TaskRecord>> heads = tree.compose(fairShare::read);
    return Future.all(List.of(plugins, freshTasks, batch, groups, quotaView, heads)).compose(all -> {
      List<TaskRecord> scanned = batch.result();
      List<TaskRecord> tasks = inQueueOrder(freshTasks.result(), scanned, heads.result()).stream()
          .filter(task -> !binds.isBinding(task.id())).toList();
      if (tasks.isEmpty() && groups.result().isEmpty()) {
        // nothing to place: keep the snapshot current anyway, so the next arrival's round reads little
        return snapshots.refresh().map(snapshot -> endOfPass(cursor != null));
      }
      return snapshots.refresh()
          .compose(snapshot -> scheduleAll(tasks, groups.result(), snapshot, plugins.result()))
          .map(v -> {
            if (scanned.size() < BATCH - fresh.size()) {
              return endOfPass(!immediate.isEmpty() || gangs.more());
            }
            TaskRecord last = scanned.get(scanned.size() - 1);
            OffsetDateTime newest = cursor == null ? last.createdAt() : cursor.newestSeen();
            for (TaskRecord task : scanned) {
              newest = task.createdAt().isAfter(newest) ? task.createdAt() : newest;
            }
            cursor = new TaskStore.Cursor(last.priority(), last.createdAt(), last.id(), newest);
            return true;
          });
    });
  }

  /**
   * The immediate channel's tasks and every queue's head merged into the scanned batch, in queue order (priority,
   * then FIFO).
   */
  private static List<TaskRecord> inQueueOrder(List<TaskRecord> fresh, List<TaskRecord> scanned,
                                               List<TaskRecord> heads) {
    Map<UUID, TaskRecord> all = new LinkedHashMap<>();
    scanned.forEach(task -> all.put(task.id(), task));
    fresh.forEach(task -> all.putIfAbsent(task.id(), task));
    heads.forEach(task -> all.putIfAbsent(task.id(), task));
    List<TaskRecord> ordered = new ArrayList<>(all.values());
    ordered.sort(Comparator.comparingInt(TaskRecord::priority).reversed()
        .thenComparing(TaskRecord::createdAt).thenComparing(TaskRecord::id));
    return ordered;
  }

  /**
   * One task's decision, staged on the snapshot when placed: a task its queue's quota cannot take (SPEC §13) waits
   * with QuotaExceeded and is not decided (nor may it preempt); a placement its queue cannot take after all (a
   * dearer card model) is not staged.
   */
  private Decision decide(TaskRecord task, TaskRequest request, Snapshot snapshot, PluginSet plugins) {
    String blocked = quotas.blocked(task);
    if (blocked != null) {
      return Decision.unschedulable(ReasonCode.QuotaExceeded, blocked);
    }
    Decision decision = pipeline.decide(request, snapshot, plugins);
    if (decision.isPlaced()) {
      String over = quotas.admit(task, decision, snapshot);
      if (over != null) {
        return Decision.unschedulable(ReasonCode.QuotaExceeded, over);
      }
      if (snapshot.reservations().heldForOthers(decision.nodeId(), task.id())) {
        metrics.backfilled(task.queue()); // it starts beside a reservation of work ahead of it
      }
      snapshot.assume(request, decision);
      reserving.staged(request, decision);
    }
    return decision;
  }

  private static boolean ahead(GroupRecord group, TaskRecord task) {
    return group.priority() > task.priority()
        || (group.priority() == task.priority() && group.createdAt().isBefore(task.createdAt()));
  }

  /**
   * The round's tasks and groups as one list in queue order (a group ahead of a task by priority, then FIFO, comes
   * first), then in fair-share order between their queues.
   */
  private List<Reserving.Work> work(List<TaskRecord> tasks, List<GangScheduling.Gang> groups, Snapshot snapshot) {
    List<Reserving.Work> work = new ArrayList<>();
    Deque<GangScheduling.Gang> waiting = new ArrayDeque<>(groups);
    for (TaskRecord task : tasks) {
      while (!waiting.isEmpty() && ahead(waiting.peek().group().group(), task)) {
        work.add(new Reserving.Work(null, waiting.poll()));
      }
      work.add(new Reserving.Work(new Decided(task, task.toRequest(), null), null));
    }
    waiting.forEach(gang -> work.add(new Reserving.Work(null, gang)));
    return fairShare.order(work, Reserving.Work::queue, Reserving.Work::demand, snapshot);
  }

  /** The scan reached the queue's tail: start again from the head, at once only if this pass bound something. */
  private boolean endOfPass(boolean resumeAtOnce) {
    boolean again = boundThisPass || resumeAtOnce;
    cursor = null;
    boundThisPass = false;
    return again;
  }

  /**
   * Decides every task of the batch on a worker thread (the pipeline is CPU work; the event loop stays free),
   * staging each placement on the snapshot as it goes, then lets {@link Preemptions} plan for the tasks that
   * found no node, records why the others stay pending, and hands the placements to the {@link BindDispatcher}. A
   * staged placement whose bind was refused is forgotten: its node is read again from PostgreSQL.
   */
  private Future<Void> scheduleAll(List<TaskRecord> tasks, List<GangScheduling.Gang> groups, Snapshot snapshot,
                                   PluginSet plugins) {
    snapshot.occupants().begin(clock.instant(), quotas.shares());
    List<GangScheduling.Gang> decidedGroups = new ArrayList<>();
    List<UUID> order = new ArrayList<>();
    return vertx.executeBlocking(() -> {
      List<Decided> decided = new ArrayList<>();
      for (Reserving.Work item : work(tasks, groups, snapshot)) {
        if (item.task() != null) {
          TaskRecord task = item.task().task();
          decided.add(new Decided(task, item.task().request(), decide(task, item.task().request(), snapshot, plugins)));
          order.add(task.id());
        } else {
          decidedGroups.add(decideGroup(item.group(), snapshot, plugins, order));
        }
      }
      return decided;
    }, true).compose(decided -> preemptions.replan(decided, snapshot, plugins))
        .compose(decided -> reserving.round(vertx, inOrder(order, decided, decidedGroups), snapshot, plugins).map(decided))
        .compose(decided -> {
      snapshot.occupants().clear();
      List<Future<Boolean>> unplaced = new ArrayList<>();
      List<Decided> placed = new ArrayList<>();
      for (Decided each : decided) {
        if (each.decision().isPlaced()) {
          placed.add(each);
        } else {
          metrics.attempt("unschedulable", each.decision().code().name());
          unplaced.add(preemptions.settle(each).recover(e -> {
            LOG.log(Level.WARNING, "recording why task " + each.task().id() + " is pending failed", e);
            return Future.succeededFuture(false);
          }));
        }
      }
      boundThisPass |= !placed.isEmpty() || decidedGroups.stream().anyMatch(gang -> gang.decision().placed());
      unplaced.add(gangs.settle(decidedGroups).map(false));
      return Future.join(unplaced).compose(v -> {
        if (unplaced.stream().anyMatch(Future::result)) {
          vertx.setTimer(RETRY_MS, id -> requestRound());
        }
        return binds.dispatch(placed);
      });
    }).onFailure(e -> snapshot.occupants().clear());
  }

  private GangScheduling.Gang decideGroup(GangScheduling.Gang gang, Snapshot snapshot, PluginSet plugins,
                                          List<UUID> order) {
    GangScheduling.Gang decided = gangs.decide(gang, snapshot, plugins, quotas);
    if (decided.decision().placed()) {
      decided.decision().placements().forEach(each -> reserving.staged(each.member(), each.decision()));
    }
    order.add(gang.group().group().id());
    return decided;
  }

  /** The round's work in the order it was decided, with the final decisions (after preemption planning). */
  private static List<Reserving.Work> inOrder(List<UUID> order, List<Decided> tasks, List<GangScheduling.Gang> groups) {
    Map<UUID, Reserving.Work> byId = new LinkedHashMap<>();
    tasks.forEach(each -> byId.put(each.task().id(), new Reserving.Work(each, null)));
    groups.forEach(each -> byId.put(each.group().group().id(), new Reserving.Work(null, each)));
    return order.stream().map(byId::get).filter(java.util.Objects::nonNull).toList();
  }
}
