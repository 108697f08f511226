package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.service.ReplicaPlan;

import io.heteroflow.controlplane.store.ReplicaSlot;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.BusMessage;
import io.heteroflow.protocol.message.BusPayload;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The inference rebuild beat (SPEC §2, leader only, every 10 s, and at once on a services kick): for every running
 * service, {@link ReplicaPlan} decides from its slots which replicas to create, re-create, stop or settle as lost,
 * and this applies it. Every write is a CAS in PostgreSQL, so a beat of a deposed leader or a pass acting on what
 * it read a moment ago can never make a second live replica of a slot.
 */
public final class ReplicaRebuildVerticle extends VerticleBase {
  public static final long PERIOD_MS = 10_000;
  private static final int BATCH = 1000;
  private final ServiceStore services;
  private final TaskStops stops;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final Clock clock;
  private final long periodMs;
  private SerialPass pass;

  public ReplicaRebuildVerticle(ServiceStore services, TaskStops stops, Leadership leadership,
                                ControlPlaneMetrics metrics, Clock clock, long periodMs) {
    this.services = services;
    this.stops = stops;
    this.leadership = leadership;
    this.metrics = metrics;
    this.clock = clock;
    this.periodMs = periodMs;
  }

  /** Completes once its kick consumer is registered. */
  @Override
  public Future<?> start() {
    pass = new SerialPass("inference rebuild", leadership, this::rebuild);
    vertx.setPeriodic(periodMs, id -> pass.request());
    return vertx.eventBus().consumer(BusAddresses.SERVICES_KICK, message -> BusPayload.answer(message, Kick::fromJson,
        kick -> {
          pass.request();
          return Future.<BusMessage>succeededFuture();
        })).completion();
  }

  /** One pass over the running services; answers how many actions took effect. */
  public Future<Integer> rebuild() {
    return services.running(BATCH).compose(running -> {
      if (running.isEmpty()) {
        return Future.succeededFuture(0);
      }
      return services.slots(running.stream().map(service -> service.group().id()).toList()).compose(slots -> {
        List<Future<Boolean>> applied = new ArrayList<>();
        for (ServiceStore.Service service : running) {
          List<ReplicaSlot> ofService = slots.getOrDefault(service.group().id(), List.of());
          int desired = service.group().desiredReplicas();
          for (ReplicaPlan.Action action : ReplicaPlan.plan(desired, ofService, service.tenantActive(), clock.instant())) {
            applied.add(apply(service, action));
          }
        }
        return SerialPass.changed(applied).onSuccess(count -> {
          if (count > 0) {
            vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("replicas rebuilt").toJson());
          }
        });
      });
    });
  }

  private Future<Boolean> apply(ServiceStore.Service service, ReplicaPlan.Action action) {
    ReplicaSlot current = action.current();
    String name = service.group().name();
    return switch (action.kind()) {
      case START -> services.startReplica(service.group().id(), action.slot(), action.generation(), action.failures(),
          action.rebuild()).map(Optional::isPresent).onSuccess(started -> {
            if (started && action.rebuild()) {
              metrics.replicaRebuilt(name);
            }
          });
      case STOP -> stops.stop(current.taskId(), current.status(), current.nodeId(), new TaskStore.Details(null,
          null, ReplicaPlan.SCALED_DOWN, "scaled down: service " + name + " wants "
              + service.group().desiredReplicas() + " replica(s)"));
      case LOST -> stops.settleLost(current.taskId(), current.status(), "its node " + current.nodeId()
          + " went offline: the replica is rebuilt elsewhere");
      case WAIT -> Future.succeededFuture(false);
    };
  }
}
