package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.registry.AgentMessages;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
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
 * (staging each decision on the snapshot) and sends the binds, which are CAS transactions, all at once. The immediate channel: a created task's id is queued (at most 1000; beyond that the queue scan
 * finds it) and kicks a round at once, which takes it along with the next batch. The 5 s tick is the longest
 * gap, and while a pass over the queue keeps binding, rounds run back to back (each yields the event loop).
 */
public final class SchedulerLoopVerticle extends VerticleBase {
  public static final int BATCH = 200;
  public static final long TICK_MS = 5000;
  public static final int IMMEDIATE_CAPACITY = 1000;
  /** About this many binds share one transaction; a round's chunks bind in parallel. */
  static final int BIND_CHUNK = 50;
  private static final DeliveryOptions BIND_DELIVERY = new DeliveryOptions().setSendTimeout(10_000);
  private static final Logger LOG = Logger.getLogger(SchedulerLoopVerticle.class.getName());

  private final Services services;
  private final Clock clock;
  private boolean running;
  private boolean kicked;
  private boolean boundThisPass;
  private TaskStore.Cursor cursor;
  private SnapshotCache snapshots;
  private final Deque<UUID> immediate = new ArrayDeque<>();

  public SchedulerLoopVerticle(Services services, Clock clock) {
    this.services = services;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    snapshots = new SnapshotCache(services.nodes(), services.plugins(), services.registry());
    vertx.eventBus().<JsonObject>consumer(BusAddresses.SCHEDULER_KICK, message -> {
      String taskId = message.body() == null ? null : message.body().getString("task_id");
      if (taskId != null && immediate.size() < IMMEDIATE_CAPACITY) {
        immediate.add(UUID.fromString(taskId));
      }
      requestRound();
    });
    vertx.setPeriodic(TICK_MS, id -> requestRound());
    vertx.eventBus().consumer(BusAddresses.LEADERSHIP_CHANGED, message -> {
      services.metrics().leaderChanged();
      snapshots.reset();
      if (services.leadership().leading()) {
        cursor = null;
        requestRound();
      }
    });
    requestRound();
    return Future.succeededFuture();
  }

  private void requestRound() {
    if (!services.leadership().leading()) {
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
      services.metrics().round(Duration.between(started, clock.instant()));
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
    List<UUID> fresh = new ArrayList<>();
    while (!immediate.isEmpty() && fresh.size() < BATCH / 2) {
      fresh.add(immediate.poll());
    }
    Future<List<TaskRecord>> freshTasks = services.tasks().pendingAmong(fresh);
    Future<List<TaskRecord>> batch = services.tasks().pending(cursor, BATCH - fresh.size());
    return Future.all(plugins, freshTasks, batch).compose(all -> {
      List<TaskRecord> scanned = batch.result();
      List<TaskRecord> tasks = inQueueOrder(freshTasks.result(), scanned);
      if (tasks.isEmpty()) {
        return Future.succeededFuture(endOfPass(cursor != null));
      }
      return snapshots.refresh()
          .compose(snapshot -> scheduleAll(tasks, snapshot, plugins.result()))
          .map(v -> {
            if (scanned.size() < BATCH - fresh.size()) {
              return endOfPass(!immediate.isEmpty());
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

  /** The immediate channel's tasks merged into the scanned batch, in queue order (priority, then FIFO). */
  private static List<TaskRecord> inQueueOrder(List<TaskRecord> fresh, List<TaskRecord> scanned) {
    Map<UUID, TaskRecord> all = new LinkedHashMap<>();
    scanned.forEach(task -> all.put(task.id(), task));
    fresh.forEach(task -> all.putIfAbsent(task.id(), task));
    List<TaskRecord> ordered = new ArrayList<>(all.values());
    ordered.sort(Comparator.comparingInt(TaskRecord::priority).reversed()
        .thenComparing(TaskRecord::createdAt).thenComparing(TaskRecord::id));
    return ordered;
  }

  /** The scan reached the queue's tail: start again from the head, at once only if this pass bound something. */
  private boolean endOfPass(boolean resumeAtOnce) {
    boolean again = boundThisPass || resumeAtOnce;
    cursor = null;
    boundThisPass = false;
    return again;
  }

  /** A task and what the pipeline decided for it on this round's snapshot. */
  record Decided(TaskRecord task, TaskRequest request, Decision decision) {
  }

  /**
   * Decides every task of the batch on a worker thread (the pipeline is CPU work; the event loop stays free),
   * staging each placement on the snapshot as it goes, then sends the placements as a few bind batches over
   * disjoint node sets at once: each is one PostgreSQL transaction on whichever member's bind verticle takes
   * it, and PostgreSQL's CAS and constraints settle any clash. A staged placement whose bind was refused is
   * simply forgotten: the next round reads PostgreSQL again.
   */
  private Future<Void> scheduleAll(List<TaskRecord> tasks, Snapshot snapshot, PluginSet plugins) {
    return vertx.executeBlocking(() -> {
      List<Decided> decided = new ArrayList<>();
      for (TaskRecord task : tasks) {
        TaskRequest request = task.toRequest();
        Decision decision = services.pipeline().decide(request, snapshot, plugins);
        if (decision.isPlaced()) {
          snapshot.assume(request, decision);
        }
        decided.add(new Decided(task, request, decision));
      }
      return decided;
    }, true).compose(decided -> {
      List<Future<Void>> settled = new ArrayList<>();
      List<Decided> placed = new ArrayList<>();
      for (Decided each : decided) {
        if (each.decision().isPlaced()) {
          snapshots.staged(each.decision().nodeId());
          placed.add(each);
        } else {
          services.metrics().attempt("unschedulable", each.decision().code().name());
          settled.add(services.tasks().setReason(each.task().id(), each.decision().code().name(),
              each.decision().message()));
        }
      }
      LeaderStore.Fence fence = services.leadership().fence();
      if (fence != null) {
        bindChunks(placed).forEach(chunk -> settled.add(bind(chunk, fence)));
      }
      return Future.join(settled.stream().map(future -> future.recover(e -> {
        LOG.log(Level.WARNING, "settling a scheduling decision failed", e);
        return Future.<Void>succeededFuture();
      })).toList()).mapEmpty();
    });
  }

  /** The placements cut into chunks of about BIND_CHUNK, by node: no two chunks share a node. */
  static List<List<Decided>> bindChunks(List<Decided> placed) {
    List<Decided> byNode = new ArrayList<>(placed);
    byNode.sort(Comparator.comparing(each -> each.decision().nodeId()));
    List<List<Decided>> chunks = new ArrayList<>();
    List<Decided> chunk = new ArrayList<>();
    for (Decided each : byNode) {
      if (chunk.size() >= BIND_CHUNK && !chunk.get(chunk.size() - 1).decision().nodeId().equals(each.decision().nodeId())) {
        chunks.add(chunk);
        chunk = new ArrayList<>();
      }
      chunk.add(each);
    }
    if (!chunk.isEmpty()) {
      chunks.add(chunk);
    }
    return chunks;
  }

  private Future<Void> bind(List<Decided> chunk, LeaderStore.Fence fence) {
    List<BindStore.Request> requests = chunk.stream().map(each -> new BindStore.Request(each.task().id(),
        each.decision().nodeId(), each.decision().gpuIndices(), each.decision().shard())).toList();
    return vertx.eventBus().<JsonObject>request(BusAddresses.SCHEDULER_BIND, BindVerticle.request(requests, fence),
            BIND_DELIVERY)
        .map(reply -> BindVerticle.outcomes(reply.body()))
        .recover(unanswered -> Future.succeededFuture(Collections.nCopies(chunk.size(),
            new BindStore.Outcome(false, null, ReasonCode.BindConflict, "the bind request was not answered ("
                + unanswered.getMessage() + "); retried from PostgreSQL next round", false))))
        .compose(outcomes -> {
          List<Future<Void>> settled = new ArrayList<>();
          for (int i = 0; i < chunk.size(); i++) {
            settled.add(settle(chunk.get(i), outcomes.get(i), fence));
          }
          return Future.join(settled).mapEmpty();
        });
  }

  private Future<Void> settle(Decided decided, BindStore.Outcome outcome, LeaderStore.Fence fence) {
    TaskRecord task = decided.task();
    Decision decision = decided.decision();
    if (outcome.fenced()) {
      if (services.leadership().leading()) {
        LOG.warning("bind refused: " + outcome.message() + "; stepping down");
      }
      services.leadership().stepDown();
      return Future.succeededFuture();
    }
    if (outcome.bound()) {
      boundThisPass = true;
      services.metrics().attempt("bound", null);
      services.metrics().bound(Duration.between(task.createdAt().toInstant(), clock.instant()));
      vertx.eventBus().send(BusAddresses.agentRun(decision.nodeId()),
          AgentMessages.run(task, decision.gpuIndices(), AgentMessages.shard(decision.shard()), outcome.hostPort(),
              fence.term()));
      return Future.succeededFuture();
    }
    if (outcome.lostClaim()) {
      services.metrics().bindConflict();
      services.metrics().attempt("conflict", outcome.code().name());
      return Future.succeededFuture();
    }
    services.metrics().attempt("rolled_back", outcome.code().name());
    return services.tasks().setReason(task.id(), outcome.code().name(), outcome.message());
  }
}
