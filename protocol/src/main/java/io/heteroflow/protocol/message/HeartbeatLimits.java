package io.heteroflow.protocol.message;

import io.heteroflow.protocol.GpuVendor;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The bounds of one heartbeat, so that a broken or hostile agent cannot make the control plane store or parse
 * unbounded data: a known vendor, at most {@link #MAX_CARDS} cards with unique indices 0..63, strings of at most
 * {@link #MAX_STRING} characters, at most {@link #MAX_LABELS} labels and {@link #MAX_IPS} addresses per list, a
 * topology of at most {@link #MAX_TOPOLOGY} characters. The first bound broken is a 400 naming the field.
 */
final class HeartbeatLimits {
  static final int MAX_CARDS = 64;
  static final int MAX_STRING = 256;
  static final int MAX_LABELS = 64;
  static final int MAX_IPS = 64;
  static final int MAX_TOPOLOGY = 64 * 1024;
  static final int MAX_ACTIVE_TASKS = 1024;

  private HeartbeatLimits() {}

  static void check(BusPayload beat, Heartbeat heartbeat) {
    if (heartbeat.gpuVendor() != null && GpuVendor.fromId(heartbeat.gpuVendor()).isEmpty()) {
      throw beat.bad("gpu_vendor", "a known vendor (nvidia, ascend, ...) is required, got " + clip(heartbeat.gpuVendor()));
    }
    if (heartbeat.gpuVendor() == null && !heartbeat.cards().isEmpty()) {
      // a vendorless node with cards would pass every gpu_type filter
      throw beat.bad("gpu_vendor", "the vendor of the cards is required when cards are reported");
    }
    bounded(beat, "boot_id", heartbeat.bootId());
    bounded(beat, "dedicated_tenant", heartbeat.dedicatedTenant());
    bounded(beat, "location.region", heartbeat.location().region());
    bounded(beat, "location.zone", heartbeat.location().zone());
    bounded(beat, "location.rack", heartbeat.location().rack());
    cards(beat, heartbeat.cards());
    atMost(beat, "internal_ips", heartbeat.internalIps(), MAX_IPS);
    atMost(beat, "public_ips", heartbeat.publicIps(), MAX_IPS);
    labels(beat, heartbeat.labels());
    if (heartbeat.topology() != null && heartbeat.topology().length() > MAX_TOPOLOGY) {
      throw beat.bad("topology", "at most " + MAX_TOPOLOGY + " characters, got " + heartbeat.topology().length());
    }
  }

  private static void cards(BusPayload beat, List<Heartbeat.Card> cards) {
    atMost(beat, "cards", cards, MAX_CARDS);
    Set<Integer> indices = new HashSet<>();
    for (int i = 0; i < cards.size(); i++) {
      Heartbeat.Card card = cards.get(i);
      int index = card.index() == null ? i : card.index();
      if (index < 0 || index >= MAX_CARDS) {
        throw beat.bad("cards[" + i + "].index", "0.." + (MAX_CARDS - 1) + " is required, got " + index);
      }
      if (!indices.add(index)) {
        throw beat.bad("cards[" + i + "].index", "card indices must be unique, " + index + " is repeated");
      }
      bounded(beat, "cards[" + i + "].uuid", card.uuid());
      bounded(beat, "cards[" + i + "].model", card.model());
    }
  }

  private static void labels(BusPayload beat, Map<String, String> labels) {
    if (labels.size() > MAX_LABELS) {
      throw beat.bad("labels", "at most " + MAX_LABELS + " labels, got " + labels.size());
    }
    for (Map.Entry<String, String> label : labels.entrySet()) {
      if (label.getKey().length() > MAX_STRING) {
        throw beat.bad("labels", "label names of at most " + MAX_STRING + " characters, got " + clip(label.getKey()));
      }
      bounded(beat, "labels." + label.getKey(), label.getValue());
    }
  }

  /** A message's {@code node_id}: a name of at most 128 characters ({@link Heartbeat#NODE_ID}), or a 400 naming it. */
  static String nodeId(BusPayload message) {
    String nodeId = message.requiredString("node_id");
    if (!Heartbeat.NODE_ID.matcher(nodeId).matches()) {
      throw message.bad("node_id", Heartbeat.NODE_ID.pattern() + " is required");
    }
    return nodeId;
  }

  /** A message's required {@code boot_id}: 1 to {@link #MAX_STRING} characters, or a 400 naming it. */
  static String bootId(BusPayload message) {
    String bootId = message.requiredString("boot_id");
    if (bootId.isEmpty() || bootId.length() > MAX_STRING) {
      throw message.bad("boot_id", "1 to " + MAX_STRING + " characters are required, got " + bootId.length());
    }
    return bootId;
  }

  /**
   * A heartbeat's or a beat's {@code active_tasks}: task ids (UUIDs), at most {@link #MAX_ACTIVE_TASKS}; null when
   * the field is absent (then no absence is counted).
   */
  static List<String> activeTasks(BusPayload beat) {
    if (beat.optionalArray("active_tasks") == null) {
      return null;
    }
    List<String> active = beat.strings("active_tasks");
    atMost(beat, "active_tasks", active, MAX_ACTIVE_TASKS);
    for (String id : active) {
      try {
        java.util.UUID.fromString(id);
      } catch (IllegalArgumentException e) {
        throw beat.bad("active_tasks", "task ids (UUIDs) are required, got " + clip(id));
      }
    }
    return active;
  }

  private static void atMost(BusPayload beat, String field, List<?> list, int max) {
    if (list.size() > max) {
      throw beat.bad(field, "at most " + max + " entries, got " + list.size());
    }
  }

  private static void bounded(BusPayload beat, String field, String value) {
    if (value != null && value.length() > MAX_STRING) {
      throw beat.bad(field, "at most " + MAX_STRING + " characters, got " + value.length());
    }
  }

  private static String clip(String value) {
    return value.length() <= 40 ? value : value.substring(0, 40) + "...";
  }
}
