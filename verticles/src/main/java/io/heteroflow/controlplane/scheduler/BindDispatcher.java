package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.BindOutcomes;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Sends a round's placements to the bind verticles as a few batches over disjoint node sets (about
 * {@link #BIND_CHUNK} binds each, one PostgreSQL transaction per batch) and settles their outcomes: the agent is
 * told to run what bound, a refusal becomes the task's reason, a passed term steps the leader down. The next
 * round may decide while these binds commit: their tasks are skipped by the scan and their nodes keep the staged
 * view in the {@link SnapshotCache} until the outcome is known; at most two rounds of binds are in flight.
 */
final class BindDispatcher {
  /** About this many binds share one transaction; a round's batches bind in parallel. */
  static final int BIND_CHUNK = 50;
  private static final DeliveryOptions BIND_DELIVERY = new DeliveryOptions().setSendTimeout(10_000);
  private static final Logger LOG = Logger.getLogger(BindDispatcher.class.getName());

  /** A task and what the pipeline decided for it on a round's snapshot. */
  record Decided(TaskRecord task, TaskRequest request, Decision decision) {
  }

  private final Vertx vertx;
  private final TaskStore tasks;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final Clock clock;
  private final SnapshotCache snapshots;
  private final Runnable retry;
  private final Set<UUID> binding = new HashSet<>();
  private final Set<UUID> settledSinceRead = new HashSet<>();
  private Future<Void> previous = Future.succeededFuture();

  /** {@code retry} asks for another round: a refused bind leaves its task pending after its round has passed. */
  BindDispatcher(Vertx vertx, TaskStore tasks, Leadership leadership, ControlPlaneMetrics metrics, Clock clock,
                 SnapshotCache snapshots, Runnable retry) {
    this.vertx = vertx;
    this.tasks = tasks;
    this.leadership = leadership;
    this.metrics = metrics;
    this.clock = clock;
    this.snapshots = snapshots;
    this.retry = retry;
  }

  /**
   * A round starts reading the queue: binds that settle from now on may have committed after that read's
   * snapshot, so the read may still show their tasks pending.
   */
  void beginQueueRead() {
    settledSinceRead.clear();
  }

  /**
   * Whether a bind of this task is in flight (the task is still pending in PostgreSQL meanwhile) or settled
   * since the current queue read began: either way the read's "pending" is not news, and binding it again
   * would only be refused as a lost claim.
   */
  boolean isBinding(UUID taskId) {
    return binding.contains(taskId) || settledSinceRead.contains(taskId);
  }

  /** Sends the binds; answers once the previous round's binds have settled. */
  Future<Void> dispatch(List<Decided> placed) {
    LeaderStore.Fence fence = leadership.fence();
    if (fence == null) {
      snapshots.reset(); // staged views that will never bind
      return previous;
    }
    placed.forEach(each -> {
      binding.add(each.task().id());
      snapshots.staged(each.decision().nodeId());
    });
    List<Future<Void>> batches = chunks(placed).stream().map(chunk -> bind(chunk, fence).recover(e -> {
      LOG.log(Level.WARNING, "settling a bind batch failed", e);
      return Future.<Void>succeededFuture();
    })).toList();
    Future<Void> gate = previous;
    previous = Future.join(batches).mapEmpty();
    return gate;
  }

  /** The placements cut into chunks of about BIND_CHUNK, by node: no two chunks share a node. */
  static List<List<Decided>> chunks(List<Decided> placed) {
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
    Map<String, Long> versions = new HashMap<>();
    Set<String> refusedOn = new HashSet<>();
    return vertx.eventBus().<JsonObject>request(BusAddresses.SCHEDULER_BIND,
            BindVerticle.request(requests, fence).toJson(), BIND_DELIVERY)
        .map(reply -> {
          BindOutcomes outcomes = BindOutcomes.fromJson(reply.body());
          versions.putAll(outcomes.nodeVersions());
          return outcomes.outcomes().stream().map(BindVerticle::fromWire).toList();
        })
        .recover(unanswered -> Future.succeededFuture(Collections.nCopies(chunk.size(),
            BindStore.Outcome.refused(ReasonCode.BindConflict, "the bind request was not answered ("
                + unanswered.getMessage() + "); retried from PostgreSQL next round"))))
        .compose(outcomes -> {
          List<Future<Void>> settled = new ArrayList<>();
          for (int i = 0; i < chunk.size(); i++) {
            if (!outcomes.get(i).bound()) {
              refusedOn.add(chunk.get(i).decision().nodeId());
            }
            settled.add(settle(chunk.get(i), outcomes.get(i), fence));
          }
          return Future.join(settled).<Void>mapEmpty();
        })
        .onComplete(done -> {
          chunk.forEach(each -> {
            String nodeId = each.decision().nodeId();
            binding.remove(each.task().id());
            settledSinceRead.add(each.task().id());
            // every bind to the node bound: PostgreSQL now holds exactly the staged view, at this version
            snapshots.settled(nodeId, done.succeeded() && !refusedOn.contains(nodeId) ? versions.get(nodeId) : null);
          });
          if (done.failed() || !refusedOn.isEmpty()) {
            retry.run();
          }
        });
  }

  private Future<Void> settle(Decided decided, BindStore.Outcome outcome, LeaderStore.Fence fence) {
    TaskRecord task = decided.task();
    Decision decision = decided.decision();
    if (outcome.fenced()) {
      if (leadership.leading()) {
        LOG.warning("bind refused: " + outcome.message() + "; stepping down");
      }
      leadership.stepDown();
      return Future.succeededFuture();
    }
    if (outcome.bound()) {
      metrics.attempt("bound", null);
      metrics.bound(Duration.between(task.createdAt().toInstant(), clock.instant()), task.queue());
      Shard shard = decision.shard() == null ? null : decision.shard().toWire();
      vertx.eventBus().send(BusAddresses.agentRun(decision.nodeId()), task.run(decision.gpuIndices(), shard,
          outcome.hostPort(), outcome.masterPort(), fence.term()).toJson());
      return Future.succeededFuture();
    }
    if (outcome.lostClaim()) {
      metrics.bindConflict();
      metrics.attempt("conflict", outcome.code().name());
      return Future.succeededFuture();
    }
    metrics.attempt("rolled_back", outcome.code().name());
    return tasks.setReason(task.id(), outcome.code().name(), outcome.message());
  }
}
