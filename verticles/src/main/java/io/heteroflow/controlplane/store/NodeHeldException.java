package io.heteroflow.controlplane.store;

import java.time.OffsetDateTime;
import java.util.Locale;

/**
 * A heartbeat refused because another live agent process (another boot id) holds its node: the holder
 * heartbeated less than the hold window ago and has not released the node. The message starts with
 * {@code node_held} and names the node and since when it is held; it never names the holder's boot id (a
 * release needs it).
 */
public final class NodeHeldException extends RuntimeException {
  private final String nodeId;
  private final OffsetDateTime heldSince;

  public NodeHeldException(String nodeId, OffsetDateTime heldSince, double silentSeconds, double holdSeconds) {
    super(String.format(Locale.ROOT, "node_held: node %s is held by another live agent process since %s (its last"
        + " heartbeat %.1f s ago); this agent process is refused until the holder is silent for %.0f s or releases"
        + " the node", nodeId, heldSince == null ? "an unknown time" : heldSince.toInstant(), silentSeconds,
        holdSeconds), null, false, false);
    this.nodeId = nodeId;
    this.heldSince = heldSince;
  }

  public String nodeId() {
    return nodeId;
  }

  public OffsetDateTime heldSince() {
    return heldSince;
  }
}
