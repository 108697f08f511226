package io.heteroflow.agent.simulated;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.NetworkAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * A GPU host described by a fleet or node file instead of detected from vendor tools: its cards, load,
 * labels, location, NVLink domains and addresses. It reports exactly what a real agent reports.
 * {@code internalIps}: IP literals, bare or CIDR ({@code 10.0.1.5/24}; default 127.0.0.1); {@code publicIps}:
 * bare IP literals (default none). A bad address is an IllegalArgumentException naming the node and the entry.
 * {@code utilizationFile}: where each card's GPU utilisation is read on every {@link #read()} (format in
 * {@link UtilizationFile}); null or absent: every card reports 0.
 */
public record SimulatedNode(String id, GpuVendor vendor, String model, int cards, long cardMemoryMb, int cpuCores,
                            double memoryGb, double cpuPercent, long memoryUsedMb, List<List<Integer>> nvlinkDomains,
                            List<Integer> numa, Map<String, String> labels, Map<String, String> location,
                            List<String> internalIps, List<String> publicIps, String dedicatedTenant,
                            Path utilizationFile)
    implements NodeSource {

  public SimulatedNode {
    nvlinkDomains = nvlinkDomains == null ? List.of() : nvlinkDomains.stream().map(List::copyOf).toList();
    numa = numa == null ? List.of() : List.copyOf(numa);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
    location = location == null ? Map.of() : Map.copyOf(location);
    internalIps = internalIps == null || internalIps.isEmpty() ? List.of(NodeReading.LOOPBACK)
        : checked(id, "internal_ips", internalIps, true);
    publicIps = publicIps == null ? List.of() : checked(id, "public_ips", publicIps, false);
  }

  /** A node without a utilisation file (every card reports 0). */
  public SimulatedNode(String id, GpuVendor vendor, String model, int cards, long cardMemoryMb, int cpuCores,
                       double memoryGb, double cpuPercent, long memoryUsedMb, List<List<Integer>> nvlinkDomains,
                       List<Integer> numa, Map<String, String> labels, Map<String, String> location,
                       List<String> internalIps, List<String> publicIps, String dedicatedTenant) {
    this(id, vendor, model, cards, cardMemoryMb, cpuCores, memoryGb, cpuPercent, memoryUsedMb, nvlinkDomains, numa,
        labels, location, internalIps, publicIps, dedicatedTenant, null);
  }

  /** A node without public addresses. */
  public SimulatedNode(String id, GpuVendor vendor, String model, int cards, long cardMemoryMb, int cpuCores,
                       double memoryGb, double cpuPercent, long memoryUsedMb, List<List<Integer>> nvlinkDomains,
                       List<Integer> numa, Map<String, String> labels, Map<String, String> location,
                       List<String> internalIps, String dedicatedTenant) {
    this(id, vendor, model, cards, cardMemoryMb, cpuCores, memoryGb, cpuPercent, memoryUsedMb, nvlinkDomains, numa,
        labels, location, internalIps, List.of(), dedicatedTenant, null);
  }

  /** This node reading its cards' utilisation from {@code file} (null: every card reports 0). */
  /** The same node under another id (copies of one node file in a simulated fleet). */
  public SimulatedNode withId(String other) {
    return new SimulatedNode(other, vendor, model, cards, cardMemoryMb, cpuCores, memoryGb, cpuPercent, memoryUsedMb,
        nvlinkDomains, numa, labels, location, internalIps, publicIps, dedicatedTenant, utilizationFile);
  }

  public SimulatedNode withUtilizationFile(Path file) {
    return new SimulatedNode(id, vendor, model, cards, cardMemoryMb, cpuCores, memoryGb, cpuPercent, memoryUsedMb,
        nvlinkDomains, numa, labels, location, internalIps, publicIps, dedicatedTenant, file);
  }

  private static List<String> checked(String id, String key, List<String> addresses, boolean prefixAllowed) {
    for (int i = 0; i < addresses.size(); i++) {
      String entry = addresses.get(i);
      try {
        if (NetworkAddress.parse(entry).prefixLength() != null && !prefixAllowed) {
          throw new IllegalArgumentException("a bare IP address is required (no /prefix)");
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("node " + id + ": " + key + "[" + i + "] '" + entry + "': " + e.getMessage());
      }
    }
    return List.copyOf(addresses);
  }

  @Override
  public String nodeId() {
    return id;
  }

  @Override
  public NodeReading read() {
    List<DetectedCard> detected = new ArrayList<>();
    int[] utilization = UtilizationFile.read(utilizationFile, cards);
    for (int index = 0; index < cards; index++) {
      detected.add(new DetectedCard(index, "SIM-" + id + "-" + index, model, cardMemoryMb, 0, utilization[index], 40,
          index < numa.size() ? numa.get(index) : null));
    }
    return new NodeReading(vendor, detected, cpuCores, cpuPercent, memoryGb, memoryUsedMb, internalIps, publicIps,
        labels, topologyLabel(), location, dedicatedTenant);
  }

  /**
   * The {@code heteroflow.io/gpu-topology} label: {@code nvlink=0-1-2-3,4-5-6-7;numa=0,0,0,0,1,1,1,1}
   * (NVLink domains as dash-joined card groups, then each card's NUMA node); null without NVLink data.
   */
  public String topologyLabel() {
    if (nvlinkDomains.isEmpty() && numa.isEmpty()) {
      return null;
    }
    StringJoiner domains = new StringJoiner(",");
    for (List<Integer> domain : nvlinkDomains) {
      StringJoiner cardsOfDomain = new StringJoiner("-");
      domain.forEach(card -> cardsOfDomain.add(String.valueOf(card)));
      domains.add(cardsOfDomain.toString());
    }
    StringJoiner numaNodes = new StringJoiner(",");
    numa.forEach(node -> numaNodes.add(String.valueOf(node)));
    return "nvlink=" + domains + ";numa=" + numaNodes;
  }

  /** The node file / fleet entry format, documented in conf/fleet-dev.yaml. */
  @SuppressWarnings("unchecked")
  public static SimulatedNode fromMap(Map<String, Object> entry) {
    String id = required(entry, "id");
    String vendorId = required(entry, "vendor");
    GpuVendor vendor = GpuVendor.fromId(vendorId)
        .orElseThrow(() -> new IllegalArgumentException("node " + id + ": unknown vendor '" + vendorId + "'"));
    List<List<Integer>> domains = new ArrayList<>();
    for (Object domain : (List<Object>) entry.getOrDefault("nvlink_domains", List.of())) {
      domains.add(((List<Object>) domain).stream().map(card -> ((Number) card).intValue()).toList());
    }
    List<Integer> numa = ((List<Object>) entry.getOrDefault("numa", List.of())).stream()
        .map(node -> ((Number) node).intValue()).toList();
    return new SimulatedNode(id, vendor, String.valueOf(entry.getOrDefault("model", vendor.id() + "-sim")),
        number(entry, "cards", 8).intValue(), number(entry, "card_memory_mb", 32768).longValue(),
        number(entry, "cpu_cores", 32).intValue(), number(entry, "memory_gb", 256).doubleValue(),
        number(entry, "cpu_percent", 5).doubleValue(), number(entry, "memory_used_mb", 8192).longValue(),
        domains, numa, strings((Map<String, Object>) entry.get("labels")),
        strings((Map<String, Object>) entry.get("location")),
        addresses(entry, "internal_ips"), addresses(entry, "public_ips"),
        entry.get("dedicated_tenant") == null ? null : String.valueOf(entry.get("dedicated_tenant")),
        entry.get("utilization_file") == null ? null : Path.of(String.valueOf(entry.get("utilization_file"))));
  }

  /** A list of addresses (absent: empty); a single string is refused: it must be a YAML list. */
  private static List<String> addresses(Map<String, Object> entry, String key) {
    Object value = entry.getOrDefault(key, List.of());
    if (!(value instanceof List<?> list)) {
      throw new IllegalArgumentException("fleet entry " + entry.get("id") + ": '" + key + "' must be a list");
    }
    return list.stream().map(String::valueOf).toList();
  }

  private static String required(Map<String, Object> entry, String key) {
    Object value = entry.get(key);
    if (value == null || String.valueOf(value).isBlank()) {
      throw new IllegalArgumentException("fleet entry " + entry + ": '" + key + "' is required");
    }
    return String.valueOf(value);
  }

  private static Number number(Map<String, Object> entry, String key, Number fallback) {
    Object value = entry.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Number number)) {
      throw new IllegalArgumentException("fleet entry " + entry.get("id") + ": '" + key + "' must be a number");
    }
    return number;
  }

  private static Map<String, String> strings(Map<String, Object> map) {
    if (map == null) {
      return Map.of();
    }
    Map<String, String> copy = new java.util.LinkedHashMap<>();
    map.forEach((key, value) -> copy.put(key, String.valueOf(value)));
    return copy;
  }
}
