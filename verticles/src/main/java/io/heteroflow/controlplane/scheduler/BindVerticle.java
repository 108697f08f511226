package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.BatchBindStore;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.BindBatch;
import io.heteroflow.protocol.message.BindOutcomes;
import io.heteroflow.protocol.message.BusPayload;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.List;

/**
 * The bind stage on every control plane: takes a batch of decided tasks off the bus and binds them in one
 * PostgreSQL transaction under the leader's fence (schema in docs/event-bus.md). Which member binds does not
 * matter: the task CAS, the card index and the term fence decide.
 */
public final class BindVerticle extends VerticleBase {
  private final BatchBindStore batchBinds;
  private final ControlPlaneMetrics metrics;

  public BindVerticle(BatchBindStore batchBinds, ControlPlaneMetrics metrics) {
    this.batchBinds = batchBinds;
    this.metrics = metrics;
  }

  /** Completes once the consumer is registered (on the clustered bus: known to every member). */
  @Override
  public Future<?> start() {
    return vertx.eventBus().consumer(BusAddresses.SCHEDULER_BIND,
        message -> BusPayload.answer(message, BindBatch::fromJson, this::bind)).completion();
  }

  /** A malformed batch was refused as a whole (400 naming the field) by its reader, before anything is bound. */
  private Future<BindOutcomes> bind(BindBatch batch) {
    List<BindStore.Request> requests = batch.binds().stream().map(bind -> new BindStore.Request(bind.taskId(),
        bind.nodeId(), bind.gpuIndices(), ShardAssignment.of(bind.shard()))).toList();
    return batchBinds.bind(requests, new LeaderStore.Fence(batch.fence().member(), batch.fence().term()))
        .onSuccess(result -> metrics.fencedBinds((int) result.outcomes().stream()
            .filter(BindStore.Outcome::fenced).count()))
        .map(result -> new BindOutcomes(result.outcomes().stream().map(BindVerticle::toWire).toList(),
            result.nodeVersions()));
  }

  /** The Bind message for a batch of placements under one fence. */
  public static BindBatch request(List<BindStore.Request> requests, LeaderStore.Fence fence) {
    return new BindBatch(requests.stream().map(request -> new BindBatch.Bind(request.taskId(), request.nodeId(),
        request.gpuIndices(), request.shard() == null ? null : request.shard().toWire())).toList(),
        new BindBatch.Fence(fence.member(), fence.term()));
  }

  private static BindOutcomes.Outcome toWire(BindStore.Outcome outcome) {
    return new BindOutcomes.Outcome(outcome.bound(), outcome.hostPort(), outcome.masterPort(),
        outcome.code() == null ? null : outcome.code().name(), outcome.message(), outcome.fenced());
  }

  /** The outcome of one bind as the store reports it; a reason code this build does not know reads as a conflict. */
  public static BindStore.Outcome fromWire(BindOutcomes.Outcome outcome) {
    ReasonCode code = null;
    if (outcome.code() != null) {
      try {
        code = ReasonCode.valueOf(outcome.code());
      } catch (IllegalArgumentException unknown) {
        code = ReasonCode.BindConflict;
      }
    }
    return new BindStore.Outcome(outcome.bound(), outcome.hostPort(), outcome.masterPort(), code, outcome.message(),
        outcome.fenced());
  }
}
