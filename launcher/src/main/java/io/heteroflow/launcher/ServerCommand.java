package io.heteroflow.launcher;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.api.ApiVerticle;
import io.heteroflow.controlplane.cluster.PreemptWatchdogVerticle;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.heteroflow.controlplane.registry.AgentBridgeVerticle;
import io.heteroflow.protocol.tls.MutualTls;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code heteroflow server}: a clustered control plane against an external PostgreSQL. */
@Command(name = "server", sortOptions = false,
    description = "A control plane on the clustered event bus (Hazelcast) against an external PostgreSQL.",
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar server --pg-url postgresql://user:pass@localhost:5432/postgres",
        "  HETEROFLOW_PG_URL=postgresql://user:pass@db:5432/hf java -jar heteroflow.jar server --http-port 8081",
        "  java -jar heteroflow.jar server --pg-url postgresql://user:pass@10.0.0.9:5432/hf \\",
        "      --cluster-host 10.0.0.5 --cluster-members 10.0.0.5,10.0.0.6",
        "  java -jar heteroflow.jar server --pg-url ... --certs-dir /etc/heteroflow/certs --member-name cp-1 \\",
        "      --agent-bridge-port 7443   (agents connect with agent --transport bridge)"})
final class ServerCommand implements Callable<Integer> {
  @Option(names = "--pg-url", paramLabel = "URL",
      description = "postgresql://user:pass@host:5432/db (or HETEROFLOW_PG_URL; one of them is required).")
  String pgUrl;
  @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "8080",
      description = "Port of the UI and the API (default ${DEFAULT-VALUE}; 0 picks a free one).")
  String httpPort;
  @Option(names = "--http-host", paramLabel = "ADDRESS", defaultValue = "0.0.0.0",
      description = "Address the UI and the API listen on (default ${DEFAULT-VALUE}: all of this machine's).")
  String httpHost;
  @Option(names = "--tls-cert", paramLabel = "FILE",
      description = "Serve the UI and the API over HTTPS with this PEM certificate (chain); needs --tls-key.")
  String tlsCert;
  @Option(names = "--tls-key", paramLabel = "FILE", description = "The PEM private key of --tls-cert.")
  String tlsKey;
  @Option(names = "--agent-bridge-port", paramLabel = "PORT", description = {"Serve the agent bridge on PORT (or"
      + " HETEROFLOW_AGENT_BRIDGE_PORT; default: none): agents connect over TCP with mutual TLS (needs --certs-dir),"
      + " each as the node id of its certificate; 0 picks a free port."})
  String agentBridgePort;
  @Option(names = "--agent-bridge-host", paramLabel = "ADDRESS", defaultValue = "0.0.0.0",
      description = "Address the agent bridge listens on (default ${DEFAULT-VALUE}).")
  String agentBridgeHost;
  @Option(names = "--config", paramLabel = "FILE",
      description = "Scheduler configuration (or HETEROFLOW_CONFIG; default conf/config.yaml, else built-in).")
  String config;
  @Option(names = "--preempt-timeout-seconds", paramLabel = "SECONDS", defaultValue = "60",
      description = {"How long an agent has to confirm a preemption before the preempt watchdog forces the victim"
          + " back to the queue (default ${DEFAULT-VALUE}; plus the victim's checkpoint timeout and grace above"
          + " 10 s); the watchdog looks every half of it."})
  String preemptTimeoutSeconds;
  @Mixin
  Cluster.Options cluster;
  @Mixin
  Cli.Help help;

  @Override
  public Integer call() throws Exception {
    SchedulerConfig config = Main.schedulerConfig(this.config);
    String url = Cli.orEnv(pgUrl, "HETEROFLOW_PG_URL", null);
    if (url == null) {
      throw new IllegalArgumentException("--pg-url (or HETEROFLOW_PG_URL) is required: "
          + "postgresql://user:pass@host:5432/db");
    }
    Database database;
    try {
      database = Database.fromUrl(url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--pg-url: " + e.getMessage(), e);
    }
    int port = Cli.port("--http-port", httpPort);
    int preemptTimeout = Cli.seconds("--preempt-timeout-seconds", preemptTimeoutSeconds,
        PreemptWatchdogVerticle.MAX_TIMEOUT_SECONDS);
    ApiVerticle.Tls tls = httpsFiles(tlsCert, tlsKey);
    AgentBridgeVerticle.Options bridge = agentBridge();
    String token = Main.adminToken();
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    Vertx vertx = Cluster.join(cluster, false, registry);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> Main.shutdown(vertx, null), "heteroflow-shutdown"));
    ControlPlane.Running running = Main.deployControlPlane(vertx, database,
        ControlPlane.Options.defaults(port, token, config).withHttp(httpHost, port).withHttpTls(tls)
            .withAgentBridge(bridge).withPreemptTimeoutSeconds(preemptTimeout), registry);
    System.out.println("HeteroFlow control plane is up on " + (tls == null ? "http" : "https") + "://localhost:"
        + running.httpPort() + "/");
    if (bridge != null) {
      System.out.println("  Agent bridge: " + agentBridgeHost + ":" + running.agentBridgePort() + " (mutual TLS)");
    }
    System.out.println(Main.adminTokenLine(token));
    new CountDownLatch(1).await();
    return 0;
  }

  /** The agent bridge of --agent-bridge-port, under this member's certificate; null without the option. */
  private AgentBridgeVerticle.Options agentBridge() {
    String port = Cli.orEnv(agentBridgePort, "HETEROFLOW_AGENT_BRIDGE_PORT", null);
    if (port == null) {
      return null;
    }
    int bridgePort = Cli.port("--agent-bridge-port", port);
    MutualTls tls = Cluster.memberTls(cluster, Main.hostName());
    if (tls == null) {
      throw new IllegalArgumentException("--agent-bridge-port needs --certs-dir (or HETEROFLOW_CERTS_DIR): agents are"
          + " admitted by their certificates of the cluster CA");
    }
    return new AgentBridgeVerticle.Options(agentBridgeHost, bridgePort, tls);
  }

  /** HTTPS files given by --tls-cert and --tls-key: both (readable files) or neither (null: plain HTTP). */
  static ApiVerticle.Tls httpsFiles(String certificate, String key) {
    if (certificate == null && key == null) {
      return null;
    }
    if (certificate == null || key == null) {
      throw new IllegalArgumentException((certificate == null ? "--tls-cert" : "--tls-key")
          + " is required with " + (certificate == null ? "--tls-key" : "--tls-cert") + " (HTTPS needs both)");
    }
    for (String[] file : new String[][] {{"--tls-cert", certificate}, {"--tls-key", key}}) {
      if (!Files.isReadable(Path.of(file[1]))) {
        throw new IllegalArgumentException(file[0] + ": no readable file " + file[1]);
      }
    }
    return new ApiVerticle.Tls(certificate, key);
  }
}
