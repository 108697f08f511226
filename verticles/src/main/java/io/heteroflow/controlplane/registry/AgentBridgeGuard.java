package io.heteroflow.controlplane.registry;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.FailureCode;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.eventbus.bridge.tcp.BridgeEvent;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Holds every frame of an agent-bridge connection to the node id in its client certificate (CN, role agent):
 * <ul>
 *   <li>a request to the control plane ({@link #INBOUND}) whose {@code node_id} is another node is answered with a
 *       403 failure on its reply address and never reaches the bus;</li>
 *   <li>registering (receiving) any address but the node's own run, stop and logs is refused;</li>
 *   <li>publishing is refused (agents only send requests);</li>
 *   <li>a certificate without an agent identity is refused on its first frame and the connection closed.</li>
 * </ul>
 * Every refusal is counted ({@code heteroflow_agent_bridge_refusals_total} by reason) and logged, the first of each
 * connection at WARNING. The client's own headers are dropped, so it cannot set the bus's timeout or codec; its requests
 * are delivered to this member's own consumers ({@code localOnly}: every control plane runs the registry), so a
 * heartbeat never takes a second hop to another member.
 * A reply to a request the control plane sent the agent (its logs) goes to a reply address the bridge keeps per
 * connection: only the connection that received the request can answer it. Runs on the bridge's event loop only.
 */
final class AgentBridgeGuard implements Handler<BridgeEvent> {
  private static final Logger LOG = Logger.getLogger(AgentBridgeGuard.class.getName());
  /** What an agent may send: its requests to the control plane. */
  static final List<String> INBOUND = List.of(BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_BEAT, BusAddresses.TASK_CLAIM,
      BusAddresses.TASK_REPORT, BusAddresses.NODE_RELEASE);

  private final ControlPlaneMetrics metrics;
  /** The node id of each open connection (empty: its certificate names no agent); removed when it closes. */
  private final Map<NetSocket, Optional<String>> identities = new HashMap<>();
  private final Set<NetSocket> warned = new java.util.HashSet<>();

  AgentBridgeGuard(ControlPlaneMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void handle(BridgeEvent event) {
    NetSocket socket = event.socket();
    Optional<String> node = identities.computeIfAbsent(socket, this::identify);
    if (node.isEmpty()) {
      refuse(event, "certificate", "the client certificate names no agent (CN = node id, OU = agent)");
      socket.close();
      return;
    }
    JsonObject frame = event.getRawMessage();
    String address = frame == null ? null : frame.getString("address");
    switch (event.type()) {
      case SOCKET_PING, REGISTERED -> event.complete(true);
      case REGISTER, UNREGISTER -> {
        if (ownAddresses(node.get()).contains(address)) {
          event.complete(true);
        } else {
          refuse(event, "address", node.get() + " may not receive " + address);
        }
      }
      case SEND -> send(event, node.get(), frame, address);
      default -> refuse(event, "publish", node.get() + " may not " + event.type().name().toLowerCase() + " "
          + address);
    }
  }

  private void send(BridgeEvent event, String node, JsonObject frame, String address) {
    // the client's headers never reach the bus; its requests go to this member's own registry (no second hop)
    frame.put("headers", new JsonObject().put("localOnly", INBOUND.contains(address)));
    if (INBOUND.contains(address) && frame.getValue("body") instanceof JsonObject body
        && body.getValue("node_id") instanceof String claimed && !claimed.equals(node)) {
      String message = "node_id: this connection is agent " + node + " (its certificate), not " + claimed;
      refuse(event, "node_id", message);
      String replyAddress = frame.getString("replyAddress");
      if (replyAddress != null) {
        write(event.socket(), new JsonObject().put("type", "err").put("address", replyAddress)
            .put("sourceAddress", address).put("failureCode", FailureCode.FORBIDDEN.code())
            .put("failureType", "RECIPIENT_FAILURE").put("message", message));
      }
      return;
    }
    event.complete(true); // a reply goes only to a reply address of this connection: the bridge checks it
  }

  private static Set<String> ownAddresses(String node) {
    return Set.of(BusAddresses.agentRun(node), BusAddresses.agentStop(node), BusAddresses.agentLogs(node));
  }

  private Optional<String> identify(NetSocket socket) {
    socket.closeHandler(closed -> {
      identities.remove(socket);
      warned.remove(socket);
      metrics.agentBridgeConnections(-1);
    });
    Optional<String> node;
    try {
      node = PeerIdentity.of(socket.peerCertificates())
          .filter(identity -> PeerIdentity.AGENT.equals(identity.role())).map(PeerIdentity::name);
    } catch (Exception e) { // no verified peer: the TLS layer should not have let it in
      node = Optional.empty();
    }
    metrics.agentBridgeConnections(1);
    return node;
  }

  private void refuse(BridgeEvent event, String reason, String message) {
    metrics.agentBridgeRefusal(reason);
    Level level = warned.add(event.socket()) ? Level.WARNING : Level.FINE;
    LOG.log(level, "agent bridge " + event.socket().remoteAddress() + ": refused (" + reason + "): " + message);
    event.complete(false);
  }

  /** One frame of the bridge protocol: a 4-byte big-endian length, then that many bytes of JSON. */
  private static void write(NetSocket socket, JsonObject frame) {
    byte[] json = frame.encode().getBytes(StandardCharsets.UTF_8);
    socket.write(Buffer.buffer(json.length + 4).appendInt(json.length).appendBytes(json));
  }
}
