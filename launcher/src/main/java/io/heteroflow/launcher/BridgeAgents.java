package io.heteroflow.launcher;

import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.agent.transport.BridgeTransport;
import io.heteroflow.protocol.tls.CertAuthority;
import io.heteroflow.protocol.tls.MutualTls;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The agent side of {@code agent --transport bridge}: the control planes' bridges from {@code --control-plane}, and one
 * TLS identity per node (its certificate's CN is its node id), read from {@code --certs-dir} or, for a simulated fleet,
 * issued at start from the CA key there.
 */
final class BridgeAgents {
  private BridgeAgents() {}

  /** {@code host:port[,host:port…]}; a bad entry is an error naming the option. */
  static List<BridgeTransport.Endpoint> endpoints(String option) {
    if (option == null || option.isBlank()) {
      throw new IllegalArgumentException("--control-plane (or HETEROFLOW_CONTROL_PLANES) is required with --transport"
          + " bridge: host:port of each control plane's agent bridge, comma-separated");
    }
    List<BridgeTransport.Endpoint> endpoints = new ArrayList<>();
    for (String entry : option.split(",")) {
      String value = entry.trim();
      int colon = value.lastIndexOf(':');
      int port;
      try {
        port = colon < 1 ? -1 : Integer.parseInt(value.substring(colon + 1));
      } catch (NumberFormatException e) {
        port = -1;
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("--control-plane: '" + value + "' is not host:port (port 1-65535)");
      }
      endpoints.add(new BridgeTransport.Endpoint(value.substring(0, colon), port));
    }
    return endpoints;
  }

  /** One bridge transport per node, each with the node's own certificate from {@code certsDir}. */
  static Function<NodeSource, AgentTransport> transports(Vertx vertx, List<BridgeTransport.Endpoint> endpoints,
                                                         Path certsDir, List<? extends NodeSource> nodes) {
    Map<String, NetClientOptions> identities = new HashMap<>();
    for (NodeSource node : nodes) {
      try {
        identities.put(node.nodeId(), MutualTls.fromDirectory(certsDir, node.nodeId()).onClient(new NetClientOptions()));
      } catch (IllegalArgumentException e) {
        throw new Cli.Refusal("--certs-dir (agent " + node.nodeId() + "): " + e.getMessage());
      }
    }
    return node -> new BridgeTransport(vertx, endpoints, identities.get(node.nodeId()),
        BridgeTransport.Settings.DEFAULTS);
  }

  /** {@code count} nodes made from the templates in turn, named {@code <template id>-00001} and so on. */
  static List<SimulatedNode> fleet(List<SimulatedNode> templates, int count) {
    if (count < 1) {
      throw new IllegalArgumentException("--count must be 1 or more, was " + count);
    }
    List<SimulatedNode> fleet = new ArrayList<>(count);
    for (int i = 1; i <= count; i++) {
      SimulatedNode template = templates.get((i - 1) % templates.size());
      fleet.add(template.withId(String.format("%s-%05d", template.id(), i)));
    }
    return fleet;
  }

  /**
   * A private directory (0700) with the cluster CA and a certificate for every node, issued now from
   * {@code certsDir}'s CA key: a simulated fleet's identities (a real agent gets its own with {@code certs issue}).
   */
  static Path issue(Path certsDir, List<? extends NodeSource> nodes) throws Exception {
    if (!Files.isReadable(certsDir.resolve(MutualTls.CA_KEY_FILE))) {
      throw new Cli.Refusal("--certs-dir: --simulate-fleet issues each simulated node's certificate and needs the CA key "
          + certsDir.resolve(MutualTls.CA_KEY_FILE).toAbsolutePath().normalize());
    }
    CertAuthority ca = CertAuthority.load(certsDir, "ca");
    Path dir = Files.createTempDirectory("heteroflow-fleet-certs-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Files.copy(certsDir.resolve(MutualTls.CA_FILE), dir.resolve(MutualTls.CA_FILE));
    for (NodeSource node : nodes) {
      ca.issue(node.nodeId(), "agent", List.of(), Duration.ofDays(7)).save(dir, node.nodeId());
    }
    return dir;
  }
}
