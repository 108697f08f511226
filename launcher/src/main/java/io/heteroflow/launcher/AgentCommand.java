package io.heteroflow.launcher;

import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.FleetFile;
import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.agent.transport.BridgeTransport;
import io.vertx.core.Vertx;
import java.util.function.Function;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code heteroflow agent}: one node agent (this host's GPUs, or simulated nodes) on the clustered bus. */
@Command(name = "agent", sortOptions = false,
    description = {"One node agent: this host's GPUs, or simulated nodes, as a lite cluster member (small fleets) or",
        "over the control planes' agent bridge (--transport bridge: mutual TLS, fleets of thousands).",
        "Detects this host's GPUs with the vendor tools, or runs the node(s) described in --simulate."},
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar agent",
        "  java -jar heteroflow.jar agent --simulate conf/fleet-dev.yaml",
        "  java -jar heteroflow.jar agent --executor docker --node-id gpu-07 \\",
        "      --cluster-host 10.0.0.7 --cluster-members 10.0.0.5,10.0.0.6",
        "  java -jar heteroflow.jar agent --public-ip 203.0.113.7   (how other VPCs reach this node)",
        "  java -jar heteroflow.jar agent --transport bridge --control-plane 10.0.0.5:7443,10.0.0.6:7443 \\",
        "      --certs-dir /etc/heteroflow/certs --node-id gpu-07",
        "  java -jar heteroflow.jar agent --simulate-fleet conf/fleet-dev.yaml --count 5000 \\",
        "      --control-plane 127.0.0.1:7443 --certs-dir certs   (a test fleet; issues its certificates)"})
final class AgentCommand implements Callable<Integer> {
  @Option(names = "--simulate", paramLabel = "NODE_FILE",
      description = "Simulated node(s): one node, or a fleet file like conf/fleet-dev.yaml.")
  String simulate;
  @Option(names = "--simulate-fleet", paramLabel = "NODE_FILE", description = {"A simulated fleet for tests and"
      + " benchmarks: --count nodes made from the node(s) in NODE_FILE in turn, each with its own bridge connection and"
      + " certificate (issued at start from the CA key in --certs-dir). Implies --transport bridge."})
  String simulateFleet;
  @Option(names = "--count", paramLabel = "N", description = "How many nodes --simulate-fleet runs.")
  Integer count;
  @Option(names = "--transport", paramLabel = "cluster|bridge", description = {"How the agent reaches the control"
      + " planes (or HETEROFLOW_AGENT_TRANSPORT): cluster (default: a lite Hazelcast member, for fleets up to a few"
      + " hundred hosts) or bridge (a TLS connection to one control plane's agent bridge at a time)."})
  String transport;
  @Option(names = "--control-plane", paramLabel = "HOST:PORT,...", description = {"The control planes' agent bridges"
      + " (server --agent-bridge-port), for --transport bridge (or HETEROFLOW_CONTROL_PLANES); the agent fails over"
      + " between them."})
  String controlPlanes;
  @Option(names = "--node-id", paramLabel = "NAME",
      description = "This node's id (or HETEROFLOW_NODE_ID; default: the host name).")
  String nodeId;
  @Option(names = "--executor", paramLabel = "process|docker",
      description = "How tasks run (or HETEROFLOW_EXECUTOR; default process).")
  String executor;
  @Option(names = "--log-dir", paramLabel = "DIR", description = "Task logs (default: a temporary directory).")
  String logDir;
  @Option(names = "--task-uids", paramLabel = "FIRST-LAST", description = {"Tasks run as one unprivileged uid per"
      + " tenant from this range (when the agent is root; default " + TaskUsers.DEFAULT_RANGE + ")."})
  String taskUids = TaskUsers.DEFAULT_RANGE;
  @Option(names = "--log-cap-mib", paramLabel = "MIB", description = "The most of one task's log kept: its newest"
      + " bytes (default 64).")
  long logCapMib = 64;
  @Option(names = "--public-ip", paramLabel = "ADDR", description = {"A public IP address of this host, reported for"
      + " ranks in other network domains; repeatable (or HETEROFLOW_PUBLIC_IPS, comma-separated; default none)."})
  List<String> publicIps = new ArrayList<>();
  @Mixin
  Cluster.Options cluster;
  @Mixin
  Cli.Help help;

  @Override
  public Integer call() throws Exception {
    String executor = Cli.orEnv(this.executor, "HETEROFLOW_EXECUTOR", "process");
    if (!executor.equals("process") && !executor.equals("docker")) {
      throw new IllegalArgumentException("--executor must be process or docker, was '" + executor + "'");
    }
    if ((simulate != null || simulateFleet != null) && !publicIps.isEmpty()) {
      throw new IllegalArgumentException("--public-ip describes this host: a simulated node takes its public_ips"
          + " from its node file");
    }
    if (count != null && simulateFleet == null) {
      throw new IllegalArgumentException("--count goes with --simulate-fleet");
    }
    if (simulateFleet != null && (simulate != null || count == null)) {
      throw new IllegalArgumentException(simulate != null ? "--simulate-fleet and --simulate exclude each other"
          : "--simulate-fleet needs --count N");
    }
    String transport = Cli.orEnv(this.transport, "HETEROFLOW_AGENT_TRANSPORT", simulateFleet != null ? "bridge" : "cluster");
    if (!transport.equals("cluster") && !transport.equals("bridge")) {
      throw new IllegalArgumentException("--transport must be cluster or bridge, was '" + transport + "'");
    }
    if (simulateFleet != null && transport.equals("cluster")) {
      throw new IllegalArgumentException("--simulate-fleet runs over the agent bridge: --transport bridge");
    }
    List<NodeSource> nodes = nodes();
    Path logs = logDir == null ? Files.createTempDirectory("heteroflow-agent-logs-") : Path.of(logDir);
    if (logCapMib < 1) {
      throw new IllegalArgumentException("--log-cap-mib must be 1 or more, was " + logCapMib);
    }
    Vertx vertx;
    Function<NodeSource, AgentTransport> transports;
    if (transport.equals("bridge")) {
      List<BridgeTransport.Endpoint> endpoints = BridgeAgents.endpoints(
          Cli.orEnv(controlPlanes, "HETEROFLOW_CONTROL_PLANES", null));
      String certs = Cli.orEnv(cluster.certsDir, "HETEROFLOW_CERTS_DIR", null);
      if (certs == null) {
        throw new IllegalArgumentException("--certs-dir (or HETEROFLOW_CERTS_DIR) is required with --transport bridge:"
            + " the agent's certificate NODE_ID.pem, its key and ca.pem ('heteroflow certs issue --role agent')");
      }
      Path identities = simulateFleet != null ? BridgeAgents.issue(Path.of(certs), nodes) : Path.of(certs);
      vertx = Vertx.vertx();
      transports = BridgeAgents.transports(vertx, endpoints, identities, nodes);
    } else {
      vertx = Cluster.join(cluster, true, null, Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", Main.hostName()));
      transports = node -> null;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> Main.shutdown(vertx, null), "heteroflow-shutdown"));
    Main.deployAgents(vertx, nodes, logs, executor.equals("docker"), TaskUsers.of(taskUids, logs), logCapMib << 20,
        transports).await();
    System.out.println("HeteroFlow agent is up for " + (nodes.size() > 20 ? nodes.size() + " nodes ("
        + nodes.get(0).nodeId() + " … " + nodes.get(nodes.size() - 1).nodeId() + ")"
        : nodes.stream().map(NodeSource::nodeId).toList()) + " (" + executor + " executor, " + transport
        + " transport, task logs in " + logs + ")");
    new CountDownLatch(1).await();
    return 0;
  }

  /** This host's node, the nodes of --simulate, or the --count nodes of --simulate-fleet. */
  private List<NodeSource> nodes() throws java.io.IOException {
    String file = simulateFleet != null ? simulateFleet : simulate;
    if (file != null && !Files.isRegularFile(Path.of(file))) {
      throw new Cli.Refusal((simulateFleet != null ? "--simulate-fleet" : "--simulate") + ": no such file "
          + Path.of(file).toAbsolutePath().normalize());
    }
    if (simulateFleet != null) {
      return List.copyOf(BridgeAgents.fleet(FleetFile.read(Path.of(simulateFleet)), count));
    }
    return simulate != null ? List.copyOf(FleetFile.read(Path.of(simulate)))
        : List.of(Main.detectingNode(Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", Main.hostName()), Main.publicIps(publicIps)));
  }
}
