package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.service.Autoscale;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.ServiceSpec;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The inference-service side of {@code /api/v1/groups} (SPEC §9): create a service, read it (replicas desired and
 * running, status, rebuilds, window state), scale it by hand ({@code PUT /groups/{id}/replicas}, a 409 while its
 * schedule window owns the count), stop it (every replica stopped gracefully; nothing is re-created).
 */
final class ServiceRoutes {
  private final Vertx vertx;
  private final ServiceStore services;
  private final QueueStore queues;
  private final TaskStops stops;
  private final Clock clock;

  ServiceRoutes(Vertx vertx, ServiceStore services, QueueStore queues, TaskStops stops, Clock clock) {
    this.vertx = vertx;
    this.services = services;
    this.queues = queues;
    this.stops = stops;
    this.clock = clock;
  }

  Future<Reply> create(RoutingContext ctx) {
    ServiceSpec spec = ServiceSpecDecoder.decode(ctx.body().buffer());
    Principal principal = Http.principal(ctx);
    principal.mayStartWork("a new service");
    return queues.list().map(tree -> spec.inQueue(QueueResolver.resolve(tree, principal, spec.queue(),
            spec.template().gpuRequired())))
        .compose(queued -> services.create(principal.tenant(), queued,
            queued.windows() != null && !queued.windows().isOpen(clock.instant())))
        .compose(created -> {
          vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("service created").toJson());
          return view(created.id());
        }).map(view -> new Reply(201, view));
  }

  /** The service's view, read now. */
  Future<JsonObject> view(UUID id) {
    return services.get(id).compose(found -> {
      ServiceStore.Service service = found.orElseThrow(() -> ApiError.notFound("group " + id));
      return services.slots(List.of(id)).map(slots -> ServiceView.of(service, slots.getOrDefault(id, List.of()),
          clock.instant()));
    });
  }

  /** Summaries of these services (a list page), with their replica counts and status (tenant activity not read). */
  Future<List<JsonObject>> summaries(List<GroupRecord> groups) {
    List<UUID> ids = groups.stream().map(GroupRecord::id).toList();
    return services.slots(ids).map(slots -> {
      List<JsonObject> views = new ArrayList<>();
      for (GroupRecord group : groups) {
        views.add(ServiceView.summary(new ServiceStore.Service(group, true),
            slots.getOrDefault(group.id(), List.of()), clock.instant()));
      }
      return views;
    });
  }

  /** {@code PUT /groups/{id}/replicas {replicas}}: retried on a concurrent change of the count. */
  Future<Reply> scale(RoutingContext ctx, GroupRecord group) {
    StrictJson json = StrictJson.parse(ctx.body().buffer(), java.util.Set.of("replicas"));
    if (!json.has("replicas")) {
      throw ApiError.badField("replicas", "is required (0 to " + ServiceSpec.MAX_REPLICAS + ")");
    }
    int replicas = (int) json.integer("replicas", 0, 0, ServiceSpec.MAX_REPLICAS);
    return scale(Http.principal(ctx), group.id(), replicas, 3);
  }

  private Future<Reply> scale(Principal principal, UUID id, int replicas, int attemptsLeft) {
    return services.get(id).compose(found -> {
      GroupRecord group = found.orElseThrow(() -> ApiError.notFound("group " + id)).group();
      if (GroupRecord.STOPPED.equals(group.status())) {
        throw new ApiError(409, "illegal_transition", null, "service " + group.name() + " is stopped")
            .withCurrentStatus("Stopped");
      }
      if (group.windowOwns()) {
        throw new ApiError(409, "window_owns_replicas", "replicas", "service " + group.name() + " is outside its"
            + " schedule window: the window's action owns the replica count until the window opens again");
      }
      ServiceSpecDecoder.replicasWithin(Autoscale.fromJson(group.autoscale()), replicas);
      if (replicas > group.desiredReplicas()) {
        principal.mayStartWork("adding replicas");
      }
      JsonObject details = new JsonObject().put("from", group.desiredReplicas()).put("to", replicas)
          .put("by", principal.admin() ? "admin" : principal.tenant());
      return services.setReplicas(group, replicas, false, null, "scale", "scaled by hand from "
              + group.desiredReplicas() + " to " + replicas + " replica(s)", details)
          .compose(set -> {
            if (set.isEmpty()) {
              if (attemptsLeft == 0) {
                throw ApiError.conflict("the service kept changing; retry");
              }
              return scale(principal, id, replicas, attemptsLeft - 1);
            }
            vertx.eventBus().publish(BusAddresses.SERVICES_KICK, Kick.because("scaled").toJson());
            return view(id).map(Reply::ok);
          });
    });
  }

  /** Stops the service for good: the row first (so nothing is re-created), then each live replica gracefully. */
  Future<Reply> stop(GroupRecord group, int attemptsLeft) {
    if (GroupRecord.STOPPED.equals(group.status())) {
      throw new ApiError(409, "illegal_transition", null, "service " + group.name() + " is already stopped")
          .withCurrentStatus("Stopped");
    }
    return services.stop(group, TaskRoutes.STOPPED_BY_USER, "stopped by user").compose(live -> {
      if (live.isEmpty()) {
        if (attemptsLeft == 0) {
          throw ApiError.conflict("the service kept changing; retry");
        }
        return services.get(group.id()).compose(fresh -> stop(fresh.orElseThrow().group(), attemptsLeft - 1));
      }
      List<Future<Boolean>> stopped = live.get().stream().map(replica -> stops.stop(replica.id(), replica.status(),
          replica.nodeId(), new TaskStore.Details(null, null, TaskRoutes.STOPPED_BY_USER, "its service "
              + group.name() + " was stopped"))).toList();
      return Future.join(stopped).transform(done -> view(group.id())).map(view -> new Reply(202, view));
    });
  }
}
