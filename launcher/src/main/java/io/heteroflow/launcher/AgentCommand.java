package io.heteroflow.launcher;

import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.FleetFile;
import io.vertx.core.Vertx;
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
    description = {"One node agent (a lite cluster member): this host's GPUs, or simulated nodes.",
        "Detects this host's GPUs with the vendor tools, or runs the node(s) described in --simulate."},
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar agent",
        "  java -jar heteroflow.jar agent --simulate conf/fleet-dev.yaml",
        "  java -jar heteroflow.jar agent --executor docker --node-id gpu-07 \\",
        "      --cluster-host 10.0.0.7 --cluster-members 10.0.0.5,10.0.0.6",
        "  java -jar heteroflow.jar agent --public-ip 203.0.113.7   (how other VPCs reach this node)"})
final class AgentCommand implements Callable<Integer> {
  @Option(names = "--simulate", paramLabel = "NODE_FILE",
      description = "Simulated node(s): one node, or a fleet file like conf/fleet-dev.yaml.")
  String simulate;
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
    if (simulate != null && !Files.isRegularFile(Path.of(simulate))) {
      throw new Cli.Refusal("--simulate: no such file " + Path.of(simulate).toAbsolutePath().normalize());
    }
    if (simulate != null && !publicIps.isEmpty()) {
      throw new IllegalArgumentException("--public-ip describes this host: a simulated node takes its public_ips"
          + " from its node file");
    }
    List<NodeSource> nodes = simulate != null ? List.copyOf(FleetFile.read(Path.of(simulate)))
        : List.of(Main.detectingNode(Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", Main.hostName()), Main.publicIps(publicIps)));
    Path logs = logDir == null ? Files.createTempDirectory("heteroflow-agent-logs-") : Path.of(logDir);
    Vertx vertx = Cluster.join(cluster, true, null, Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", Main.hostName()));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> Main.shutdown(vertx, null), "heteroflow-shutdown"));
    if (logCapMib < 1) {
      throw new IllegalArgumentException("--log-cap-mib must be 1 or more, was " + logCapMib);
    }
    Main.deployAgents(vertx, nodes, logs, executor.equals("docker"), TaskUsers.of(taskUids, logs), logCapMib << 20).await();
    System.out.println("HeteroFlow agent is up for " + nodes.stream().map(NodeSource::nodeId).toList()
        + " (" + executor + " executor, task logs in " + logs + ")");
    new CountDownLatch(1).await();
    return 0;
  }
}
