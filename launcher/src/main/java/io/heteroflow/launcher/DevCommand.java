package io.heteroflow.launcher;

import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.FleetFile;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.cluster.PreemptWatchdogVerticle;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code heteroflow dev}: embedded PostgreSQL, the control plane and the agents of a fleet in one process. */
@Command(name = "dev", sortOptions = false,
    description = "Everything in one process: embedded PostgreSQL, control plane, simulated GPU agents.",
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar dev",
        "  java -jar heteroflow.jar dev --http-port 9090 --data-dir /tmp/hf   (keeps the data across runs)",
        "  java -jar heteroflow.jar dev --fleet host   (one agent for this machine's real GPUs)"})
final class DevCommand implements Callable<Integer> {
  /** {@code dev --fleet host}: one agent for this host's real GPUs instead of simulated nodes. */
  static final String HOST_FLEET = "host";

  @Option(names = "--http-port", paramLabel = "PORT", defaultValue = "8080",
      description = "Port of the UI and the API (default ${DEFAULT-VALUE}; 0 picks a free one).")
  String httpPort;
  @Option(names = "--http-host", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
      description = "Address the UI and the API listen on (default ${DEFAULT-VALUE}, this machine only; 0.0.0.0: all).")
  String httpHost;
  @Option(names = "--fleet", paramLabel = "FILE|host", defaultValue = "conf/fleet-dev.yaml",
      description = "The simulated nodes (default ${DEFAULT-VALUE}), or 'host': this machine's real GPUs.")
  String fleet;
  @Option(names = "--data-dir", paramLabel = "DIR",
      description = "Keep PostgreSQL's data and the task logs in DIR (default: a temporary directory removed at exit).")
  String dataDir;
  @Option(names = "--config", paramLabel = "FILE",
      description = "Scheduler configuration (or HETEROFLOW_CONFIG; default conf/config.yaml, else built-in).")
  String config;
  @Option(names = "--preempt-timeout-seconds", paramLabel = "SECONDS", defaultValue = "60",
      description = {"How long an agent has to confirm a preemption before the preempt watchdog forces the victim"
          + " back to the queue (default ${DEFAULT-VALUE}; plus the victim's checkpoint timeout and grace above"
          + " 10 s); the watchdog looks every half of it."})
  String preemptTimeoutSeconds;
  @Mixin
  Cli.Help help;

  @Override
  public Integer call() throws Exception {
    SchedulerConfig config = Main.schedulerConfig(this.config);
    int port = Cli.port("--http-port", httpPort);
    int preemptTimeout = Cli.seconds("--preempt-timeout-seconds", preemptTimeoutSeconds,
        PreemptWatchdogVerticle.MAX_TIMEOUT_SECONDS);
    List<NodeSource> nodes = HOST_FLEET.equals(fleet)
        ? List.of(Main.detectingNode(Main.hostName(), Main.publicIps(List.of())))
        : List.copyOf(FleetFile.read(fleetFile(fleet)));
    String token = Main.adminToken();

    EmbeddedDatabase postgres = EmbeddedDatabase.start(dataDir == null ? null : Path.of(dataDir));
    Path certs;
    PrometheusMeterRegistry registry;
    Vertx vertx;
    try {
      certs = CertsCommand.ensureDev(postgres.root().resolve("certs"));
      registry = ControlPlane.newMeterRegistry();
      vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    } catch (Exception e) { // before the shutdown hook: stop PostgreSQL here
      postgres.close();
      throw e;
    }
    List<String> agents = new java.util.concurrent.CopyOnWriteArrayList<>();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> Main.shutdown(vertx, postgres, agents),
        "heteroflow-shutdown"));
    ControlPlane.Running running = Main.deployControlPlane(vertx, postgres.database(),
        ControlPlane.Options.defaults(port, token, config).withHttp(httpHost, port)
            .withPreemptTimeoutSeconds(preemptTimeout), registry);
    Path logs = postgres.taskLogs();
    TaskUsers users = TaskUsers.of(TaskUsers.DEFAULT_RANGE, logs);
    if (users.switching()) { // task users pass through the data dir (PostgreSQL's own data stays 0700 below it)
      Files.setPosixFilePermissions(postgres.root(), java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
    }
    agents.addAll(Main.deployAgents(vertx, nodes, logs, false, users, ProcessExecutor.DEFAULT_LOG_CAP_BYTES,
        node -> null).await());

    System.out.println("HeteroFlow dev is up.");
    System.out.println("  UI and API:  http://localhost:" + running.httpPort() + "/");
    System.out.println(Main.adminTokenLine(token));
    System.out.println("  PostgreSQL:  " + postgres.url() + " (password in " + postgres.passwordFile()
        + ", 0600; data in " + postgres.root() + (dataDir == null ? ", removed at exit)" : ")"));
    System.out.println("  Certificates: " + certs + " (cluster CA; member '" + CertsCommand.DEV_MEMBER + "', agent '"
        + CertsCommand.DEV_AGENT + "': --certs-dir of server and agent)");
    System.out.println("  Fleet:       " + (HOST_FLEET.equals(fleet) ? "this host's GPUs, detected"
        : nodes.size() + " simulated nodes from " + fleet));
    System.out.println("Press Ctrl-C to stop.");
    new CountDownLatch(1).await();
    return 0;
  }

  /** The fleet file as given, else the copy inside the jar (so dev runs from any directory). */
  private static Path fleetFile(String name) throws IOException {
    Path path = Path.of(name);
    if (Files.isRegularFile(path)) {
      return path;
    }
    try (InputStream packaged = DevCommand.class.getClassLoader().getResourceAsStream(name)) {
      if (packaged == null) {
        throw new Cli.Refusal("--fleet: no such file " + path.toAbsolutePath().normalize());
      }
      Path copy = Files.createTempFile("heteroflow-fleet-", ".yaml");
      copy.toFile().deleteOnExit();
      Files.copy(packaged, copy, StandardCopyOption.REPLACE_EXISTING);
      return copy;
    }
  }
}
