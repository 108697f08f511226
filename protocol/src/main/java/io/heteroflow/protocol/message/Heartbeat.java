package io.heteroflow.protocol.message;

import io.heteroflow.protocol.NetworkAddress;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * agent → control plane: one reading of a node (docs/event-bus.md "Heartbeat"). Numbers an agent leaves out read
 * as 0; {@code activeTasks} is null when the agent did not send the field (then no absence is counted).
 * {@code internalIps} are IP literals, each bare or with its interface's prefix length ({@code 10.0.1.5/24});
 * {@code publicIps} bare IP literals (the addresses other network domains reach the node at; empty when the
 * agent was given none). {@link #fromJson} refuses any other entry, naming it ({@code internal_ips[2]}).
 */
public record Heartbeat(String nodeId, String bootId, long seq, String gpuVendor, int cpuCores, double cpuPercent,
                        double memoryTotalGb, long memoryUsedMb, List<Card> cards, List<String> activeTasks,
                        List<String> internalIps, List<String> publicIps, Map<String, String> labels, String topology, Location location,
                        String dedicatedTenant) implements BusMessage {
  static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  public Heartbeat {
    cards = List.copyOf(cards);
    activeTasks = activeTasks == null ? null : List.copyOf(activeTasks);
    internalIps = List.copyOf(internalIps);
    publicIps = publicIps == null ? List.of() : List.copyOf(publicIps);
    labels = Map.copyOf(labels);
    location = location == null ? Location.NONE : location;
  }

  /** The internal addresses, parsed (with their prefix lengths, where reported). */
  public List<NetworkAddress> internalAddresses() {
    return internalIps.stream().map(NetworkAddress::parse).toList();
  }

  /** The public addresses, parsed (host-only). */
  public List<NetworkAddress> publicAddresses() {
    return publicIps.stream().map(NetworkAddress::parse).toList();
  }

  /** One card as the agent read it; {@code index} null means "its place in the list". */
  public record Card(Integer index, String uuid, String model, long memoryTotalMb, long memoryUsedMb,
                     int utilizationPercent, int temperatureC, Integer numaNode) {
    JsonObject toJson() {
      return new JsonObject().put("index", index).put("uuid", uuid).put("model", model)
          .put("memory_total_mb", memoryTotalMb).put("memory_used_mb", memoryUsedMb)
          .put("utilization_percent", utilizationPercent).put("temperature_c", temperatureC).put("numa_node", numaNode);
    }

    static Card read(BusPayload card) {
      return new Card(card.optionalInteger("index"), card.optionalString("uuid"), card.optionalString("model"),
          orZero(card.optionalLong("memory_total_mb")), orZero(card.optionalLong("memory_used_mb")),
          orZero(card.optionalInteger("utilization_percent")), orZero(card.optionalInteger("temperature_c")),
          card.optionalInteger("numa_node"));
    }
  }

  /** Where an operator said the node is; each part may be null. */
  public record Location(String region, String zone, String rack) {
    public static final Location NONE = new Location(null, null, null);

    JsonObject toJson() {
      JsonObject json = new JsonObject();
      putIfPresent(json, "region", region);
      putIfPresent(json, "zone", zone);
      putIfPresent(json, "rack", rack);
      return json;
    }

    static Location read(BusPayload location) {
      return location == null ? NONE : new Location(location.optionalString("region"),
          location.optionalString("zone"), location.optionalString("rack"));
    }
  }

  @Override
  public JsonObject toJson() {
    JsonObject json = BusMessage.envelope().put("node_id", nodeId).put("boot_id", bootId).put("seq", seq)
        .put("gpu_vendor", gpuVendor).put("cpu_cores", cpuCores).put("cpu_percent", cpuPercent)
        .put("memory_total_gb", memoryTotalGb).put("memory_used_mb", memoryUsedMb)
        .put("cards", new JsonArray(cards.stream().map(Card::toJson).toList()));
    if (activeTasks != null) {
      json.put("active_tasks", new JsonArray(activeTasks));
    }
    json.put("internal_ips", new JsonArray(internalIps)).put("public_ips", new JsonArray(publicIps))
        .put("labels", new JsonObject(Map.copyOf(labels)))
        .put("topology", topology).put("location", location.toJson());
    putIfPresent(json, "dedicated_tenant", dedicatedTenant);
    return json;
  }

  /**
   * A heartbeat, or a 400 naming the first field of the wrong type (node ids: a name of at most 128 characters)
   * or beyond its bound ({@link HeartbeatLimits}).
   */
  public static Heartbeat fromJson(JsonObject json) {
    BusPayload beat = BusMessage.versioned(json);
    String nodeId = beat.requiredString("node_id");
    if (!NODE_ID.matcher(nodeId).matches()) {
      throw beat.bad("node_id", NODE_ID.pattern() + " is required");
    }
    List<Card> cards = new ArrayList<>();
    beat.objects("cards").forEach(card -> cards.add(Card.read(card)));
    Double cpuPercent = beat.optionalNumber("cpu_percent");
    Double memoryTotalGb = beat.optionalNumber("memory_total_gb");
    List<String> active = HeartbeatLimits.activeTasks(beat);
    Heartbeat heartbeat = new Heartbeat(nodeId, beat.optionalString("boot_id"), orZero(beat.optionalLong("seq")),
        beat.optionalString("gpu_vendor"), orZero(beat.optionalInteger("cpu_cores")),
        cpuPercent == null ? 0 : cpuPercent, memoryTotalGb == null ? 0 : memoryTotalGb,
        orZero(beat.optionalLong("memory_used_mb")), cards,
        active, addresses(beat, "internal_ips", true), addresses(beat, "public_ips", false),
        beat.stringMap("labels"), beat.optionalString("topology"), Location.read(beat.optionalObject("location")),
        beat.optionalString("dedicated_tenant"));
    HeartbeatLimits.check(beat, heartbeat);
    return heartbeat;
  }

  /** The entries of an address list (absent: empty), each an IP literal, with a prefix only where allowed. */
  private static List<String> addresses(BusPayload beat, String field, boolean prefixAllowed) {
    List<String> addresses = beat.strings(field);
    for (int i = 0; i < addresses.size(); i++) {
      NetworkAddress address;
      try {
        address = NetworkAddress.parse(addresses.get(i));
      } catch (IllegalArgumentException e) {
        throw beat.bad(field + "[" + i + "]", e.getMessage());
      }
      if (address.prefixLength() != null && !prefixAllowed) {
        throw beat.bad(field + "[" + i + "]", "a bare IP address is required (no prefix), got " + addresses.get(i));
      }
    }
    return addresses;
  }

  private static long orZero(Long value) {
    return value == null ? 0 : value;
  }

  private static int orZero(Integer value) {
    return value == null ? 0 : value;
  }

  private static void putIfPresent(JsonObject json, String field, Object value) {
    if (value != null) {
      json.put(field, value);
    }
  }
}
