package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.GroupSpec;
import io.heteroflow.controlplane.store.GroupStore;
import io.heteroflow.controlplane.store.QueueStore;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.UUID;

/**
 * {@code /api/v1/groups}: create a task group with its members, list, read (members with ranks, nodes, statuses;
 * the group's status and reason), stop. A tenant sees only its own groups (404 otherwise). A stop of a waiting
 * group stops it and its members at once; a placed group becomes {@code stopping} and its lifecycle stops every
 * member gracefully.
 */
final class GroupRoutes {
  private final Vertx vertx;
  private final GroupStore groups;
  private final QueueStore queues;
  private final int defaultTimeoutSeconds;
  private final ControlPlaneMetrics metrics;
  private final ServiceRoutes services;
  private final ServiceStore serviceStore;

  GroupRoutes(Vertx vertx, GroupStore groups, QueueStore queues, int defaultTimeoutSeconds,
              ControlPlaneMetrics metrics, ServiceStore serviceStore, ServiceRoutes services) {
    this.vertx = vertx;
    this.groups = groups;
    this.queues = queues;
    this.defaultTimeoutSeconds = defaultTimeoutSeconds;
    this.metrics = metrics;
    this.serviceStore = serviceStore;
    this.services = services;
  }

  void mount(Router api) {
    api.post("/groups").handler(Http.handle(this::create));
    api.get("/groups").putMetadata(RouteGuard.QUERY, List.of("limit")).handler(Http.handle(this::list));
    api.get("/groups/:id").handler(Http.handle(ctx -> visible(ctx).compose(group -> group.group().isService()
        ? services.view(group.group().id()).map(Reply::ok) : Future.succeededFuture(Reply.ok(view(group))))));
    api.post("/groups/:id/stop").handler(Http.handle(this::stop));
    api.put("/groups/:id/replicas").handler(Http.handle(ctx -> visible(ctx).compose(group -> {
      if (!group.group().isService()) {
        throw new ApiError(409, "not_a_service", null, "group " + group.group().name() + " is a gang of "
            + group.group().memberCount() + " members: only an inference service (declared with replicas) scales");
      }
      return services.scale(ctx, group.group());
    })));
    api.get("/groups/:id/events").putMetadata(RouteGuard.QUERY, List.of("limit")).handler(Http.handle(ctx ->
        visible(ctx).compose(group -> serviceStore.events(group.group().id(), Http.limit(ctx, 100, 1000)))
            .map(events -> Reply.ok(new JsonObject().put("items", events).put("count", events.size())))));
  }

  private Future<Reply> create(RoutingContext ctx) {
    if (ServiceSpecDecoder.declaresService(ctx.body().buffer())) {
      return services.create(ctx);
    }
    Http.principal(ctx).mayStartWork("a new group");
    GroupSpec spec = GroupSpecDecoder.decode(ctx.body().buffer(), defaultTimeoutSeconds);
    Principal principal = Http.principal(ctx);
    return queues.list().map(tree -> spec.inQueue(QueueResolver.resolve(tree, principal,
            spec.queue(), spec.maxMemberCards())))
        .compose(queued -> groups.create(principal.tenant(), queued)).map(created -> {
      spec.members().forEach(member -> metrics.taskCreated());
      vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("group created").toJson());
      return new Reply(201, view(created));
    });
  }

  private Future<Reply> list(RoutingContext ctx) {
    int limit = Http.limit(ctx, 100, 1000);
    Principal principal = Http.principal(ctx);
    return groups.list(principal.admin() ? null : principal.tenant(), limit).compose(found -> services
        .summaries(found.stream().filter(GroupRecord::isService).toList()).map(serviceViews -> {
          JsonArray items = new JsonArray();
          java.util.Iterator<JsonObject> nextService = serviceViews.iterator();
          found.forEach(group -> items.add(group.isService() ? nextService.next() : summary(group)));
          return Reply.ok(new JsonObject().put("items", items).put("count", items.size()));
        }));
  }

  private Future<Reply> stop(RoutingContext ctx) {
    return visible(ctx).compose(group -> group.group().isService() ? services.stop(group.group(), 3)
        : stop(group, 3));
  }

  private Future<Reply> stop(GroupStore.Group group, int attemptsLeft) {
    GroupRecord record = group.group();
    if (record.isFinished()) {
      throw new ApiError(409, "illegal_transition", null, "group is already " + record.status()
          + "; it cannot be stopped").withCurrentStatus(record.status());
    }
    if (GroupRecord.STOPPING.equals(record.status())) {
      return Future.succeededFuture(new Reply(202, view(group)));
    }
    boolean waiting = GroupRecord.PENDING.equals(record.status());
    return groups.move(record, waiting ? GroupRecord.STOPPED : GroupRecord.STOPPING, GroupRecord.STOPPED,
            TaskRoutes.STOPPED_BY_USER, "stopped by user")
        .compose(moved -> {
          if (moved.isEmpty()) {
            if (attemptsLeft == 0) {
              throw ApiError.conflict("the group kept changing state; retry");
            }
            return reload(record.id()).compose(fresh -> stop(fresh, attemptsLeft - 1));
          }
          vertx.eventBus().publish(BusAddresses.GROUPS_KICK, Kick.because("group stop").toJson());
          return reload(record.id()).map(fresh -> new Reply(202, view(fresh)));
        });
  }

  private Future<GroupStore.Group> visible(RoutingContext ctx) {
    UUID id = Http.idParam(ctx, "group");
    Principal principal = Http.principal(ctx);
    return groups.get(id).map(found -> found.filter(group -> principal.sees(group.group().tenant()))
        .orElseThrow(() -> ApiError.notFound("group " + id)));
  }

  private Future<GroupStore.Group> reload(UUID id) {
    return groups.get(id).map(found -> found.orElseThrow(() -> ApiError.notFound("group " + id)));
  }

  static JsonObject summary(GroupRecord group) {
    return new JsonObject().put("id", group.id().toString()).put("name", group.name()).put("tenant", group.tenant())
        .put("type", group.type()).put("kind", GroupRecord.GANG).put("gpu_type", group.gpuType()).put("parallelism", group.parallelism())
        .put("priority", group.priority()).put("queue", group.queue()).put("status", group.status()).put("member_count", group.memberCount())
        .put("reason", group.reasonCode() == null ? null
            : new JsonObject().put("code", group.reasonCode()).put("message", group.reasonMessage()))
        .put("estimated_start_at", GroupRecord.PENDING.equals(group.status()) && group.estimatedStartAt() != null
            ? group.estimatedStartAt().toInstant().toString() : null)
        .put("estimate_note", GroupRecord.PENDING.equals(group.status()) ? group.estimateNote() : null)
        .put("restart_policy", new JsonObject().put("max_restarts", group.maxRestarts()))
        .put("restart_count", group.restartCount())
        .put("master", group.masterNode() == null ? null : new JsonObject().put("node", group.masterNode())
            .put("addr", group.masterAddr()).put("port", group.masterPort()))
        .put("backend", group.backend()).put("network_domains", group.networkDomains())
        .put("created_at", String.valueOf(group.createdAt()))
        .put("scheduled_at", group.scheduledAt() == null ? null : group.scheduledAt().toString())
        .put("finished_at", group.finishedAt() == null ? null : group.finishedAt().toString());
  }

  /** The group with the members of its current attempt, in rank order. */
  static JsonObject view(GroupStore.Group group) {
    JsonArray members = new JsonArray();
    group.members().forEach(member -> members.add(new JsonObject().put("rank", member.groupRank())
        .put("task_id", member.id().toString()).put("name", member.name()).put("status", member.status().wire())
        .put("node", member.nodeId()).put("gpus", new JsonArray(List.copyOf(member.gpuIndices())))
        .put("gpu_required", member.gpuRequired()).put("master_port", member.masterPort())
        .put("reason", member.reasonCode() == null ? null
            : new JsonObject().put("code", member.reasonCode()).put("message", member.reasonMessage()))));
    return summary(group.group()).put("members", members);
  }
}
