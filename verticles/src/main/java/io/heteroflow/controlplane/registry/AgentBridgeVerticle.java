package io.heteroflow.controlplane.registry;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.tls.MutualTls;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.net.NetServerOptions;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * The agents' way in at fleet scale: the Vert.x TCP event-bus bridge on its own port, under mutual TLS (a client
 * needs a certificate of the cluster CA; its CN is its node id). Agents are then plain TCP clients, not Hazelcast
 * members. Inbound, an agent may send only the agent → control plane requests of {@link BusAddresses}; outbound, it
 * may register only its own node's run, stop and logs addresses. {@link AgentBridgeGuard} holds every message to
 * the certificate's node id. A connection silent for {@link #IDLE_SECONDS} (agents heartbeat every 2 s) is closed,
 * and its registrations with it.
 */
public final class AgentBridgeVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(AgentBridgeVerticle.class.getName());
  public static final int IDLE_SECONDS = 30;

  /** Where the bridge listens and whose certificate it serves. */
  public record Options(String host, int port, MutualTls tls) {}

  private final Options options;
  private final ControlPlaneMetrics metrics;
  private TcpEventBusBridge bridge;

  public AgentBridgeVerticle(Options options, ControlPlaneMetrics metrics) {
    this.options = options;
    this.metrics = metrics;
  }

  /** The inbound (agent → control plane) and outbound (control plane → one agent) addresses a client may use. */
  static BridgeOptions permissions() {
    BridgeOptions permitted = new BridgeOptions();
    for (String address : AgentBridgeGuard.INBOUND) {
      permitted.addInboundPermitted(new PermittedOptions().setAddress(address));
    }
    // the guard narrows this to the client's own node
    return permitted.addOutboundPermitted(new PermittedOptions().setAddressRegex("heteroflow\\.agent\\..+"));
  }

  /**
   * The bridge on every event loop: one instance per event-loop thread, sharing one port (Vert.x spreads the accepted
   * connections over them), so thousands of TLS handshakes after a control plane's death are not queued on one thread.
   * Answers the port (the chosen one when {@code options.port()} is 0).
   */
  public static Future<Integer> deploy(io.vertx.core.Vertx vertx, Options options, ControlPlaneMetrics metrics) {
    return vertx.executeBlocking(() -> options.port() > 0 ? options.port() : freePort(options.host()))
        .compose(port -> {
          Options fixed = new Options(options.host(), port, options.tls());
          return vertx.deployVerticle(() -> new AgentBridgeVerticle(fixed, metrics),
              new io.vertx.core.DeploymentOptions().setInstances(io.vertx.core.VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE))
              .map(id -> port);
        });
  }

  /** Completes once the bridge listens on {@code options.port()} (a busy port fails the start); see {@link #deploy}. */
  @Override
  public Future<?> start() {
    NetServerOptions server = options.tls().onServer(new NetServerOptions())
        .setIdleTimeout(IDLE_SECONDS).setIdleTimeoutUnit(TimeUnit.SECONDS)
        .setSslHandshakeTimeout(30).setSslHandshakeTimeoutUnit(TimeUnit.SECONDS)
        .setTcpNoDelay(true);
    bridge = TcpEventBusBridge.create(vertx, permissions(), server, new AgentBridgeGuard(metrics));
    return bridge.listen(options.port(), options.host()).onSuccess(listening ->
        LOG.fine("agent bridge listening on " + options.host() + ":" + options.port() + " (mutual TLS)"));
  }

  @Override
  public Future<?> stop() {
    return bridge == null ? Future.succeededFuture() : bridge.close();
  }

  /** A port free on {@code host} now (the bridge does not tell which port 0 chose). */
  private static int freePort(String host) throws java.io.IOException {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName(host))) {
      return socket.getLocalPort();
    }
  }
}
