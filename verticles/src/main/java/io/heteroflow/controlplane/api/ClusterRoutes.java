package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.api.Http.Reply;
import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.controlplane.store.NodeStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

/** {@code GET /api/v1/cluster}: the control-plane members, which one leads under which term, and the agents. */
final class ClusterRoutes {
  /** A member that has not written its beat for this long is not listed. */
  static final int MEMBER_SEEN_SECONDS = 10;
  private final LeaderStore leaders;
  private final NodeStore nodes;
  private final Leadership leadership;

  ClusterRoutes(LeaderStore leaders, NodeStore nodes, Leadership leadership) {
    this.leaders = leaders;
    this.nodes = nodes;
    this.leadership = leadership;
  }

  void mount(Router api) {
    api.get("/cluster").handler(Http.handle(ctx -> leaders.describe(MEMBER_SEEN_SECONDS)
        .compose(cluster -> nodes.all().map(nodes -> {
          JsonArray agents = new JsonArray();
          nodes.forEach(node -> agents.add(new JsonObject().put("node_id", node.info().id())
              .put("status", node.info().status()).put("gpu_vendor", node.info().gpuVendor())
              .put("last_heartbeat_at", node.lastHeartbeatAt() == null ? null : node.lastHeartbeatAt().toString())));
          return Reply.ok(cluster.put("this_member", leadership.memberId()).put("agents", agents));
        }))));
  }
}
