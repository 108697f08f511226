package io.heteroflow.agent.node;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * One reading of a host: its GPU vendor (null without GPUs) and cards, load, addresses, labels, NVLink
 * topology label, and the location / dedication an operator described for it.
 */
public record NodeReading(GpuVendor vendor, List<DetectedCard> cards, int cpuCores, double cpuPercent,
                          double memoryTotalGb, long memoryUsedMb, List<String> internalIps, Map<String, String> labels,
                          String topology, Map<String, String> location, String dedicatedTenant) {

  public NodeReading {
    cards = List.copyOf(cards);
    internalIps = internalIps.isEmpty() ? List.of("127.0.0.1") : List.copyOf(internalIps);
    labels = Map.copyOf(labels);
    location = Map.copyOf(location);
  }

  /** The heartbeat message (schema in docs/event-bus.md). */
  public JsonObject heartbeat(String nodeId, String bootId, long sequence, Collection<String> activeTasks) {
    JsonArray cardReports = new JsonArray();
    for (DetectedCard card : cards) {
      cardReports.add(new JsonObject().put("index", card.index()).put("uuid", card.uuid()).put("model", card.model())
          .put("memory_total_mb", card.memoryTotalMb()).put("memory_used_mb", card.memoryUsedMb())
          .put("utilization_percent", card.utilizationPercent()).put("temperature_c", card.temperatureC())
          .put("numa_node", card.numaNode()));
    }
    return new JsonObject()
        .put("node_id", nodeId)
        .put("boot_id", bootId)
        .put("seq", sequence)
        .put("gpu_vendor", vendor == null ? null : vendor.id())
        .put("cpu_cores", cpuCores)
        .put("cpu_percent", cpuPercent)
        .put("memory_total_gb", memoryTotalGb)
        .put("memory_used_mb", memoryUsedMb)
        .put("cards", cardReports)
        .put("active_tasks", new JsonArray(List.copyOf(activeTasks)))
        .put("internal_ips", new JsonArray(internalIps))
        .put("labels", new JsonObject(Map.copyOf(labels)))
        .put("topology", topology)
        .put("location", new JsonObject(Map.copyOf(location)))
        .put("dedicated_tenant", dedicatedTenant);
  }
}
