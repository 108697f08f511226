package io.heteroflow.agent.node;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.NetworkAddress;
import io.heteroflow.protocol.message.Heartbeat;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * One reading of a host: its GPU vendor (null without GPUs) and cards, load, addresses, labels, NVLink
 * topology label, and the location / dedication an operator described for it. {@code internalIps} are IP
 * literals, bare or in CIDR form with the interface's prefix length ({@code 10.0.1.5/24}; none reads as
 * {@code 127.0.0.1}); {@code publicIps} bare IP literals an operator gave (none: empty).
 */
public record NodeReading(GpuVendor vendor, List<DetectedCard> cards, int cpuCores, double cpuPercent,
                          double memoryTotalGb, long memoryUsedMb, List<String> internalIps, List<String> publicIps,
                          Map<String, String> labels, String topology, Map<String, String> location,
                          String dedicatedTenant) {
  /** The address a host without any other reports. */
  public static final String LOOPBACK = "127.0.0.1";

  public NodeReading {
    cards = List.copyOf(cards);
    internalIps = internalIps.isEmpty() ? List.of(LOOPBACK) : List.copyOf(internalIps);
    publicIps = publicIps == null ? List.of() : List.copyOf(publicIps);
    labels = Map.copyOf(labels);
    location = Map.copyOf(location);
  }

  /** A reading without public addresses. */
  public NodeReading(GpuVendor vendor, List<DetectedCard> cards, int cpuCores, double cpuPercent,
                     double memoryTotalGb, long memoryUsedMb, List<String> internalIps, Map<String, String> labels,
                     String topology, Map<String, String> location, String dedicatedTenant) {
    this(vendor, cards, cpuCores, cpuPercent, memoryTotalGb, memoryUsedMb, internalIps, List.of(), labels, topology,
        location, dedicatedTenant);
  }

  /**
   * The first internal address without its prefix ({@code 10.0.1.5} of {@code 10.0.1.5/24}): a single task's
   * MASTER_ADDR. An entry that is not an IP literal (a described node's hand-written value) is given up to its '/'.
   */
  public String primaryInternalIp() {
    String first = internalIps.get(0);
    try {
      return NetworkAddress.parse(first).ip();
    } catch (IllegalArgumentException e) {
      int slash = first.indexOf('/');
      return slash < 0 ? first : first.substring(0, slash);
    }
  }

  /** The heartbeat message (schema in docs/event-bus.md). */
  public Heartbeat heartbeat(String nodeId, String bootId, long sequence, Collection<String> activeTasks) {
    List<Heartbeat.Card> reports = cards.stream().map(card -> new Heartbeat.Card(card.index(), card.uuid(),
        card.model(), card.memoryTotalMb(), card.memoryUsedMb(), card.utilizationPercent(), card.temperatureC(),
        card.numaNode())).toList();
    return new Heartbeat(nodeId, bootId, sequence, vendor == null ? null : vendor.id(), cpuCores, cpuPercent,
        memoryTotalGb, memoryUsedMb, reports, List.copyOf(activeTasks), internalIps, publicIps, labels, topology,
        new Heartbeat.Location(location.get("region"), location.get("zone"), location.get("rack")), dedicatedTenant);
  }
}
