package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.OffsetDateTime;
import java.util.Map;

/**
 * A node as stored: the scheduler's view of it plus what only operators look at. {@code draining}: a drain was
 * asked for and tasks still run there; {@code dedicatedByAdmin}: the dedicated tenant is an admin's, which
 * heartbeats never change.
 */
public record NodeRecord(NodeInfo info, OffsetDateTime lastHeartbeatAt, JsonArray internalIps, JsonArray publicIps,
                         Map<Integer, String> cardUuids, boolean draining, boolean dedicatedByAdmin) {

  public JsonObject toJson() {
    JsonArray cards = new JsonArray();
    for (CardInfo card : info.cards()) {
      CardUse use = info.use(card.index());
      cards.add(new JsonObject().put("index", card.index()).put("uuid", cardUuids.get(card.index()))
          .put("model", card.model()).put("memory_total_mb", card.memoryTotalMb())
          .put("memory_used_mb", card.memoryUsedMb()).put("utilization_percent", card.utilizationPercent())
          .put("temperature_c", card.temperatureC()).put("numa_node", card.numaNode())
          .put("state", use.wholeTasks() > 0 ? "whole-card" : use.shards() > 0 ? "shard" : "free")
          .put("shards", use.shards()).put("shard_memory_mb", use.shardMemoryMb())
          .put("tenants", new JsonArray(use.tenants().stream().sorted().toList())));
    }
    return new JsonObject()
        .put("id", info.id())
        .put("gpu_vendor", info.gpuVendor())
        .put("status", info.status())
        .put("executable", info.executable())
        .put("dedicated_tenant", info.dedicatedTenant())
        .put("dedicated_by", info.dedicatedTenant() == null && !dedicatedByAdmin ? null
            : dedicatedByAdmin ? "admin" : "agent")
        .put("cordoned", info.cordoned())
        .put("draining", draining)
        .put("location", new JsonObject().put("region", info.region()).put("zone", info.zone()).put("rack", info.rack()))
        .put("labels", new JsonObject(Map.copyOf(info.labels())))
        .put("topology", info.topology())
        .put("internal_ips", internalIps)
        .put("public_ips", publicIps)
        .put("cpu_cores", info.cpuCores())
        .put("cpu_percent", info.cpuPercent())
        .put("memory_total_gb", info.memoryTotalGb())
        .put("memory_used_mb", info.memoryUsedMb())
        .put("gpu_total", info.gpuTotal())
        .put("gpu_used", info.gpuUsed())
        .put("cpu_allocated", info.cpuAllocated())
        .put("memory_allocated_mb", info.memoryAllocatedMb())
        .put("last_heartbeat_at", lastHeartbeatAt == null ? null : lastHeartbeatAt.toString())
        .put("cards", cards);
  }
}
