package io.heteroflow.launcher;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.transport.AgentTransport;
import java.util.function.Function;
import io.heteroflow.agent.executor.DockerExecutor;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.LocalHostProbe;
import io.heteroflow.agent.node.DetectingNodeSource;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.bench.BenchCommand;
import io.heteroflow.launcher.simulate.SimulateCommand;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.net.BindException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code heteroflow dev | server | agent | postgres | bench | simulate | certs}: one distribution, several roles. The
 * command line is parsed by picocli: every subcommand has {@code --help} with examples, and a usage error exits
 * 2 naming the option (see {@link Cli}).
 */
@Command(name = "heteroflow", synopsisSubcommandLabel = "COMMAND",
    description = "HeteroFlow: a GPU cluster scheduler. One jar, several roles.",
    footer = {"", "Run 'heteroflow COMMAND --help' (or 'heteroflow help COMMAND') for a command's options and examples.",
        "The admin token is HETEROFLOW_ADMIN_TOKEN when set, else a random one printed at start-up.",
        "", "Examples:",
        "  java -jar heteroflow.jar dev",
        "  java -jar heteroflow.jar server --pg-url postgresql://user:pass@db:5432/heteroflow",
        "  java -jar heteroflow.jar agent --simulate conf/fleet-dev.yaml"})
public final class Main implements Runnable {
  static final long HEARTBEAT_MS = 2000;
  static final Duration STOP_GRACE = Duration.ofSeconds(10);
  private static final int DEPLOY_BATCH = 200;
  /**
   * Hazelcast logs through java.util.logging: about 60 INFO lines per process at start. Kept at WARNING (a
   * strong reference: the level of a logger nobody holds is lost when it is collected).
   */
  private static final Logger HAZELCAST_LOG = Logger.getLogger("com.hazelcast");

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;
  @Spec
  CommandSpec spec;

  Main() {}

  public static void main(String[] argv) {
    System.exit(commandLine().execute(argv));
  }

  /** The whole command line: the six subcommands and {@code help}. */
  static CommandLine commandLine() {
    quietHazelcast();
    CommandLine cli = new CommandLine(new Main())
        .addSubcommand("dev", new DevCommand())
        .addSubcommand("server", new ServerCommand())
        .addSubcommand("agent", new AgentCommand())
        .addSubcommand("postgres", new PostgresCommand())
        .addSubcommand("bench", new BenchCommand())
        .addSubcommand("simulate", new SimulateCommand())
        .addSubcommand("certs", new CertsCommand())
        .addSubcommand("help", new CommandLine.HelpCommand());
    cli.setUsageHelpWidth(110);
    cli.setParameterExceptionHandler(Cli::usageError);
    cli.setExecutionExceptionHandler((e, command, parsed) -> Cli.failure(e, command));
    return cli;
  }

  static void quietHazelcast() {
    if (System.getProperty("java.util.logging.config.file") == null) {
      HAZELCAST_LOG.setLevel(Level.WARNING);
    }
  }

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** The control plane deployed; a busy HTTP port is a {@link Cli.Refusal} naming the port and --http-port. */
  static ControlPlane.Running deployControlPlane(Vertx vertx, Database database, ControlPlane.Options options,
                                                 PrometheusMeterRegistry registry) throws Exception {
    try {
      return ControlPlane.deploy(vertx, database, options, registry).await();
    } catch (Exception e) { // await throws the deployment's own failure, unwrapped
      for (Throwable cause = e; cause != null; cause = cause.getCause()) {
        if (cause instanceof BindException || String.valueOf(cause.getMessage()).contains("Address already in use")) {
          throw new Cli.Refusal("HTTP port " + options.httpPort() + " is already in use: stop what listens there, "
              + "or choose another port with --http-port");
        }
      }
      throw e;
    }
  }

  /**
   * One agent per node; tasks run as {@code users} (one uid per tenant when root), logs capped at {@code logCap}. Each
   * agent talks through {@code transports}' transport for its node (null: the clustered event bus). Deployed 200 at a
   * time: each completes once connected, so a fleet of thousands does not open every connection at once. Answers their
   * deployment ids.
   */
  static Future<List<String>> deployAgents(Vertx vertx, List<NodeSource> nodes, Path logDir, boolean docker,
                                           TaskUsers users, long logCap, Function<NodeSource, AgentTransport> transports)
      throws IOException {
    if (users.switching()) { // task users pass through to their own directories below it, listing nothing
      Files.setPosixFilePermissions(logDir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
    }
    List<String> ids = new java.util.concurrent.CopyOnWriteArrayList<>();
    Future<?> deployed = Future.succeededFuture();
    for (int from = 0; from < nodes.size(); from += DEPLOY_BATCH) {
      List<NodeSource> batch = nodes.subList(from, Math.min(nodes.size(), from + DEPLOY_BATCH));
      deployed = deployed.compose(previous -> Future.all(batch.stream().<Future<String>>map(node -> {
        ProcessExecutor processes = new ProcessExecutor(vertx, logDir.resolve(node.nodeId()),
            ProcessExecutor.workerCountFor(node.cpuCores()), STOP_GRACE, users, logCap);
        TaskExecutor executor = docker ? new DockerExecutor(processes, "docker", (int) STOP_GRACE.toSeconds())
            : processes;
        return vertx.deployVerticle(new AgentVerticle(node, executor, HEARTBEAT_MS, transports.apply(node)))
            .onSuccess(ids::add);
      }).toList()));
    }
    return deployed.map(all -> List.copyOf(ids));
  }

  /** This host as a node: GPUs found by the vendor detection chain, and the public addresses given. */
  static NodeSource detectingNode(String nodeId, List<String> publicIps) {
    return new DetectingNodeSource(nodeId, new LocalHostProbe(), DetectionChain.standard(), Map.of(), publicIps);
  }

  /**
   * The {@code --public-ip} values, else HETEROFLOW_PUBLIC_IPS split at commas, each a bare IP literal (a bad one
   * is a usage error naming the option).
   */
  static List<String> publicIps(List<String> given) {
    List<String> values = new ArrayList<>(given);
    if (values.isEmpty()) {
      String fromEnv = Cli.orEnv(null, "HETEROFLOW_PUBLIC_IPS", "");
      for (String value : fromEnv.split(",")) {
        if (!value.isBlank()) {
          values.add(value.trim());
        }
      }
    }
    try {
      return DetectingNodeSource.publicIps(values);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--public-ip (or HETEROFLOW_PUBLIC_IPS): " + e.getMessage(), e);
    }
  }

  static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  /** {@code --config FILE}, else conf/config.yaml in the working directory, else the defaults in the jar. */
  static SchedulerConfig schedulerConfig(String option) throws IOException {
    String file = Cli.orEnv(option, "HETEROFLOW_CONFIG", null);
    if (file != null) {
      if (!Files.isRegularFile(Path.of(file))) {
        throw new Cli.Refusal("--config: no such file " + Path.of(file).toAbsolutePath().normalize());
      }
      return SchedulerConfig.load(Path.of(file));
    }
    Path local = Path.of(SchedulerConfig.RESOURCE);
    return Files.isRegularFile(local) ? SchedulerConfig.load(local) : SchedulerConfig.defaults();
  }

  /** The token is printed only when it was generated here; one from the environment is never echoed. */
  static String adminTokenLine(String token) {
    String fromEnv = System.getenv("HETEROFLOW_ADMIN_TOKEN");
    return fromEnv != null && !fromEnv.isBlank() ? "  Admin token: from HETEROFLOW_ADMIN_TOKEN (not printed)"
        : "  Admin token: " + token;
  }

  static String adminToken() {
    String fromEnv = System.getenv("HETEROFLOW_ADMIN_TOKEN");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromEnv.trim();
    }
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return "hfa_" + HexFormat.of().formatHex(bytes);
  }

  static void shutdown(Vertx vertx, EmbeddedDatabase postgres) {
    shutdown(vertx, postgres, List.of());
  }

  /**
   * Closes Vert.x; {@code agentsFirst} (dev: the agents beside the control plane) are undeployed before the rest,
   * so each releases its node through a control plane still running (Vert.x alone undeploys all at once).
   */
  static void shutdown(Vertx vertx, EmbeddedDatabase postgres, List<String> agentsFirst) {
    try {
      Future.join(agentsFirst.stream().map(vertx::undeploy).toList()).await(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      System.err.println("stopping the agents: " + e);
    }
    try {
      vertx.close().await();
    } catch (Exception e) {
      System.err.println("closing Vert.x: " + e);
    }
    if (postgres != null) {
      try {
        postgres.close();
      } catch (IOException e) {
        System.err.println("stopping PostgreSQL: " + e);
      }
    }
  }
}
