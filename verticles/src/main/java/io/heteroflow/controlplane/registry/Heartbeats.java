package io.heteroflow.controlplane.registry;

import io.heteroflow.protocol.BusPayload;
import java.util.regex.Pattern;

/** The shape of a heartbeat (docs/event-bus.md), checked field by field before it reaches PostgreSQL. */
final class Heartbeats {
  private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  private Heartbeats() {}

  static String validNodeId(BusPayload beat) {
    String nodeId = beat.requiredString("node_id");
    if (!NODE_ID.matcher(nodeId).matches()) {
      throw beat.bad("node_id", NODE_ID.pattern() + " is required");
    }
    return nodeId;
  }

  /** Every field the heartbeat writer reads has the type it reads it as (absent is fine: a default applies). */
  static void validate(BusPayload beat) {
    beat.optionalString("boot_id");
    beat.optionalLong("seq");
    beat.optionalString("gpu_vendor");
    beat.optionalInteger("cpu_cores");
    beat.optionalNumber("cpu_percent");
    beat.optionalNumber("memory_total_gb");
    beat.optionalLong("memory_used_mb");
    beat.optionalObject("labels");
    beat.optionalString("topology");
    beat.strings("internal_ips");
    beat.strings("active_tasks");
    beat.optionalString("dedicated_tenant");
    BusPayload location = beat.optionalObject("location");
    if (location != null) {
      location.optionalString("region");
      location.optionalString("zone");
      location.optionalString("rack");
    }
    for (BusPayload card : beat.objects("cards")) {
      card.optionalInteger("index");
      card.optionalString("uuid");
      card.optionalString("model");
      card.optionalLong("memory_total_mb");
      card.optionalLong("memory_used_mb");
      card.optionalInteger("utilization_percent");
      card.optionalInteger("temperature_c");
      card.optionalInteger("numa_node");
    }
  }
}
