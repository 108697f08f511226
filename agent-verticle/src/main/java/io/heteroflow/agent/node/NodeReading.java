package io.heteroflow.agent.node;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Heartbeat;
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
  public Heartbeat heartbeat(String nodeId, String bootId, long sequence, Collection<String> activeTasks) {
    List<Heartbeat.Card> reports = cards.stream().map(card -> new Heartbeat.Card(card.index(), card.uuid(),
        card.model(), card.memoryTotalMb(), card.memoryUsedMb(), card.utilizationPercent(), card.temperatureC(),
        card.numaNode())).toList();
    return new Heartbeat(nodeId, bootId, sequence, vendor == null ? null : vendor.id(), cpuCores, cpuPercent,
        memoryTotalGb, memoryUsedMb, reports, List.copyOf(activeTasks), internalIps, labels, topology,
        new Heartbeat.Location(location.get("region"), location.get("zone"), location.get("rack")), dedicatedTenant);
  }
}
