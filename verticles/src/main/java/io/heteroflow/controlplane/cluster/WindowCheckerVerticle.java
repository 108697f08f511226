package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.ControlPlaneMetrics;

import io.heteroflow.controlplane.service.ScheduleWindows;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The window checker (SPEC §9, leader only, every 60 s): a service outside every open interval of its schedule
 * window gets the window's action — {@code pause} to 0 replicas, {@code scale} to {@code scale_to}, {@code stop}
 * for good — and from then the window owns its count (the autoscaler skips it, manual scaling is a 409). When the
 * window opens again, pause and scale restore the count from before, kept in PostgreSQL so a new leader restores
 * what an old one paused. An action that would add replicas waits while the tenant is inactive; taking them away
 * never does. Each change is a CAS on the service's version: a stale leader's check changes nothing.
 */
public final class WindowCheckerVerticle extends VerticleBase {
  public static final long PERIOD_MS = 60_000;
  private final ServiceStore services;
  private final TaskStops stops;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final Clock clock;
  private final long periodMs;
  /** The edge each service's last recorded skip waited for, so a waiting action is not logged every check. */
  private final Map<UUID, Instant> skipRecorded = new HashMap<>();
  private SerialPass pass;

  public WindowCheckerVerticle(ServiceStore services, TaskStops stops, Leadership leadership,
                               ControlPlaneMetrics metrics, Clock clock, long periodMs) {
    this.services = services;
    this.stops = stops;
    this.leadership = leadership;
    this.metrics = metrics;
    this.clock = clock;
    this.periodMs = periodMs;
  }

  @Override
  public Future<?> start() {
    pass = new SerialPass("window check", leadership, this::check);
    vertx.setPeriodic(periodMs, id -> pass.request());
    return Future.succeededFuture();
  }

  /** One check of every running service with windows; answers how many changed. */
  public Future<Integer> check() {
    Instant now = clock.instant();
    return services.running(1000).compose(running -> {
      List<Future<Boolean>> changed = new ArrayList<>();
      Set<UUID> ids = new HashSet<>();
      running.forEach(service -> ids.add(service.group().id()));
      skipRecorded.keySet().retainAll(ids);
      for (ServiceStore.Service service : running) {
        if (service.group().windows() != null) {
          changed.add(apply(service, ScheduleWindows.fromJson(service.group().windows()), now));
        }
      }
      return SerialPass.changed(changed).onSuccess(count -> {
        if (count > 0) {
          vertx.eventBus().publish(BusAddresses.SERVICES_KICK, Kick.because("window action").toJson());
        }
      });
    });
  }

  private Future<Boolean> apply(ServiceStore.Service service, ScheduleWindows windows, Instant now) {
    GroupRecord group = service.group();
    boolean open = windows.isOpen(now);
    Instant edge = windows.nextEdge(now);
    JsonObject details = new JsonObject().put("at", now.toString()).put("window", open ? "open" : "closed")
        .put("next_edge_at", edge == null ? null : edge.toString()).put("action", windows.action().wire())
        .put("replicas_before", group.desiredReplicas());
    int desired = group.desiredReplicas();
    if (!open && !group.windowOwns()) {
      return switch (windows.action()) {
        case STOP -> services.stop(group, "WindowStopped", "stopped for good by its schedule window at " + now)
            .compose(live -> live.map(replicas -> stopAll(replicas, group).map(true))
                .orElse(Future.succeededFuture(false)))
            .onSuccess(done -> count(done, group, "stop"));
        case PAUSE -> change(service, 0, true, desired, "window", "window closed: paused (had " + desired
            + " replica(s))", details, "pause", edge);
        case SCALE -> change(service, windows.scaleTo(), true, desired, "window", "window closed: scaled from "
            + desired + " to " + windows.scaleTo() + " replica(s)", details, "scale", edge);
      };
    }
    if (open && group.windowOwns()) {
      int restored = group.replicasBeforeWindow();
      return change(service, restored, false, null, "window", "window opened: restored " + restored
          + " replica(s) (had " + desired + ")", details.put("replicas_after", restored), "restore", edge);
    }
    return Future.succeededFuture(false);
  }

  private Future<Boolean> change(ServiceStore.Service service, int target, boolean owns, Integer before, String kind,
                                 String message, JsonObject details, String action, Instant edge) {
    GroupRecord group = service.group();
    if (target > group.desiredReplicas() && !service.tenantActive()) {
      if (java.util.Objects.equals(skipRecorded.put(group.id(), edge), edge) && edge != null) {
        return Future.succeededFuture(false);
      }
      metrics.windowAction(group.name(), action + "-skipped");
      return services.event(group.id(), "window-skipped", "window " + action + " to " + target
          + " replica(s) skipped: tenant " + group.tenant() + " is inactive (it adds replicas); retried every check",
          details).map(false);
    }
    return services.setReplicas(group, target, owns, before, kind, message, details.put("replicas_after", target))
        .map(Optional::isPresent).onSuccess(done -> count(done, group, action));
  }

  private Future<Void> stopAll(List<ServiceStore.LiveReplica> replicas, GroupRecord group) {
    List<Future<Boolean>> stopped = new ArrayList<>();
    for (ServiceStore.LiveReplica replica : replicas) {
      stopped.add(stops.stop(replica.id(), replica.status(), replica.nodeId(), new TaskStore.Details(null,
          null, "WindowStopped", "service " + group.name() + " was stopped for good by its schedule window")));
    }
    return Future.join(stopped).mapEmpty();
  }

  private void count(boolean done, GroupRecord group, String action) {
    if (done) {
      metrics.windowAction(group.name(), action);
    }
  }
}
