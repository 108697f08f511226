package io.heteroflow.launcher;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.DockerExecutor;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.LocalHostProbe;
import io.heteroflow.agent.node.DetectingNodeSource;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.FleetFile;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.api.ApiVerticle;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.bench.BenchCommand;
import io.heteroflow.launcher.simulate.SimulateCommand;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
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
  /** {@code dev --fleet host}: one agent for this host's real GPUs instead of simulated nodes. */
  static final String HOST_FLEET = "host";
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
        .addSubcommand("dev", new Dev())
        .addSubcommand("server", new Server())
        .addSubcommand("agent", new Agent())
        .addSubcommand("postgres", new Postgres())
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

  @Command(name = "dev", sortOptions = false,
      description = "Everything in one process: embedded PostgreSQL, control plane, simulated GPU agents.",
      footer = {"", "Examples:",
          "  java -jar heteroflow.jar dev",
          "  java -jar heteroflow.jar dev --http-port 9090 --data-dir /tmp/hf   (keeps the data across runs)",
          "  java -jar heteroflow.jar dev --fleet host   (one agent for this machine's real GPUs)"})
  static final class Dev implements Callable<Integer> {
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
    @Mixin
    Cli.Help help;

    @Override
    public Integer call() throws Exception {
      SchedulerConfig config = schedulerConfig(this.config);
      int port = Cli.port("--http-port", httpPort);
      List<NodeSource> nodes = HOST_FLEET.equals(fleet) ? List.of(detectingNode(hostName(), publicIps(List.of())))
          : List.copyOf(FleetFile.read(fleetFile(fleet)));
      String token = adminToken();

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
      Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, postgres, agents), "heteroflow-shutdown"));
      ControlPlane.Running running = deployControlPlane(vertx, postgres.database(),
          ControlPlane.Options.defaults(port, token, config).withHttp(httpHost, port), registry);
      Path logs = postgres.taskLogs();
      TaskUsers users = TaskUsers.of(TaskUsers.DEFAULT_RANGE, logs);
      if (users.switching()) { // task users pass through the data dir (PostgreSQL's own data stays 0700 below it)
        Files.setPosixFilePermissions(postgres.root(), java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
      }
      agents.addAll(deployAgents(vertx, nodes, logs, false, users, ProcessExecutor.DEFAULT_LOG_CAP_BYTES).await());

      Database db = postgres.database();
      System.out.println("HeteroFlow dev is up.");
      System.out.println("  UI and API:  http://localhost:" + running.httpPort() + "/");
      System.out.println(adminTokenLine(token));
      System.out.println("  PostgreSQL:  postgresql://postgres:postgres@localhost:" + db.options().getPort()
          + "/postgres (data in " + postgres.root() + (dataDir == null ? ", removed at exit)" : ")"));
      System.out.println("  Certificates: " + certs + " (cluster CA; member '" + CertsCommand.DEV_MEMBER + "', agent '"
          + CertsCommand.DEV_AGENT + "': --certs-dir of server and agent)");
      System.out.println("  Fleet:       " + (HOST_FLEET.equals(fleet) ? "this host's GPUs, detected"
          : nodes.size() + " simulated nodes from " + fleet));
      System.out.println("Press Ctrl-C to stop.");
      new CountDownLatch(1).await();
      return 0;
    }
  }

  @Command(name = "server", sortOptions = false,
      description = "A control plane on the clustered event bus (Hazelcast) against an external PostgreSQL.",
      footer = {"", "Examples:",
          "  java -jar heteroflow.jar server --pg-url postgresql://user:pass@localhost:5432/postgres",
          "  HETEROFLOW_PG_URL=postgresql://user:pass@db:5432/hf java -jar heteroflow.jar server --http-port 8081",
          "  java -jar heteroflow.jar server --pg-url postgresql://user:pass@10.0.0.9:5432/hf \\",
          "      --cluster-host 10.0.0.5 --cluster-members 10.0.0.5,10.0.0.6"})
  static final class Server implements Callable<Integer> {
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
    @Option(names = "--config", paramLabel = "FILE",
        description = "Scheduler configuration (or HETEROFLOW_CONFIG; default conf/config.yaml, else built-in).")
    String config;
    @Mixin
    Cluster.Options cluster;
    @Mixin
    Cli.Help help;

    @Override
    public Integer call() throws Exception {
      SchedulerConfig config = schedulerConfig(this.config);
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
      ApiVerticle.Tls tls = httpsFiles(tlsCert, tlsKey);
      String token = adminToken();
      PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
      Vertx vertx = Cluster.join(cluster, false, registry);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, null), "heteroflow-shutdown"));
      ControlPlane.Running running = deployControlPlane(vertx, database,
          ControlPlane.Options.defaults(port, token, config).withHttp(httpHost, port).withHttpTls(tls), registry);
      System.out.println("HeteroFlow control plane is up on " + (tls == null ? "http" : "https") + "://localhost:"
          + running.httpPort() + "/");
      System.out.println(adminTokenLine(token));
      new CountDownLatch(1).await();
      return 0;
    }
  }

  @Command(name = "agent", sortOptions = false,
      description = {"One node agent (a lite cluster member): this host's GPUs, or simulated nodes.",
          "Detects this host's GPUs with the vendor tools, or runs the node(s) described in --simulate."},
      footer = {"", "Examples:",
          "  java -jar heteroflow.jar agent",
          "  java -jar heteroflow.jar agent --simulate conf/fleet-dev.yaml",
          "  java -jar heteroflow.jar agent --executor docker --node-id gpu-07 \\",
          "      --cluster-host 10.0.0.7 --cluster-members 10.0.0.5,10.0.0.6",
          "  java -jar heteroflow.jar agent --public-ip 203.0.113.7   (how other VPCs reach this node)"})
  static final class Agent implements Callable<Integer> {
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
          : List.of(detectingNode(Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", hostName()), publicIps(publicIps)));
      Path logs = logDir == null ? Files.createTempDirectory("heteroflow-agent-logs-") : Path.of(logDir);
      Vertx vertx = Cluster.join(cluster, true, null, Cli.orEnv(nodeId, "HETEROFLOW_NODE_ID", hostName()));
      Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, null), "heteroflow-shutdown"));
      if (logCapMib < 1) {
        throw new IllegalArgumentException("--log-cap-mib must be 1 or more, was " + logCapMib);
      }
      deployAgents(vertx, nodes, logs, executor.equals("docker"), TaskUsers.of(taskUids, logs), logCapMib << 20).await();
      System.out.println("HeteroFlow agent is up for " + nodes.stream().map(NodeSource::nodeId).toList()
          + " (" + executor + " executor, task logs in " + logs + ")");
      new CountDownLatch(1).await();
      return 0;
    }
  }

  @Command(name = "postgres", sortOptions = false,
      description = "Only the embedded PostgreSQL, to try server and agent without installing one.",
      footer = {"", "Examples:",
          "  java -jar heteroflow.jar postgres",
          "  java -jar heteroflow.jar postgres --port 5433 --data-dir /tmp/hf-pg"})
  static final class Postgres implements Callable<Integer> {
    @Option(names = "--port", paramLabel = "PORT", defaultValue = "5432",
        description = "PostgreSQL's port (default ${DEFAULT-VALUE}).")
    String port;
    @Option(names = "--data-dir", paramLabel = "DIR",
        description = "Keep the data in DIR (default: a temporary directory, removed at exit).")
    String dataDir;
    @Mixin
    Cli.Help help;

    @Override
    public Integer call() throws Exception {
      int pgPort = Cli.port("--port", port);
      if (pgPort > 0 && !portFree(pgPort)) {
        throw new Cli.Refusal("port " + pgPort + " is already in use (another PostgreSQL?): choose another with --port");
      }
      EmbeddedDatabase postgres = EmbeddedDatabase.start(dataDir == null ? null : Path.of(dataDir), pgPort);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          postgres.close();
        } catch (IOException e) {
          System.err.println("stopping PostgreSQL: " + e);
        }
      }, "heteroflow-shutdown"));
      System.out.println("PostgreSQL is up: postgresql://postgres:postgres@localhost:"
          + postgres.database().options().getPort() + "/postgres (data in " + postgres.root() + ")");
      new CountDownLatch(1).await();
      return 0;
    }
  }

  /** Whether nothing listens on {@code port} (any address). */
  static boolean portFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
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
   * One agent per node (answers their deployment ids); tasks run as {@code users} (one uid per tenant when root),
   * logs capped at {@code logCap}.
   */
  static Future<List<String>> deployAgents(Vertx vertx, List<NodeSource> nodes, Path logDir, boolean docker,
                                           TaskUsers users, long logCap) throws IOException {
    if (users.switching()) { // task users pass through to their own directories below it, listing nothing
      Files.setPosixFilePermissions(logDir, java.nio.file.attribute.PosixFilePermissions.fromString("rwx--x--x"));
    }
    List<Future<String>> deployments = new ArrayList<>();
    for (NodeSource node : nodes) {
      ProcessExecutor processes = new ProcessExecutor(vertx, logDir.resolve(node.nodeId()),
          ProcessExecutor.workerCountFor(node.cpuCores()), STOP_GRACE, users, logCap);
      TaskExecutor executor = docker ? new DockerExecutor(processes, "docker", (int) STOP_GRACE.toSeconds()) : processes;
      deployments.add(vertx.deployVerticle(new AgentVerticle(node, executor, HEARTBEAT_MS)));
    }
    return Future.all(deployments).map(all -> all.list());
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
  private static SchedulerConfig schedulerConfig(String option) throws IOException {
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

  /** The fleet file as given, else the copy inside the jar (so dev runs from any directory). */
  private static Path fleetFile(String name) throws IOException {
    Path path = Path.of(name);
    if (Files.isRegularFile(path)) {
      return path;
    }
    try (InputStream packaged = Main.class.getClassLoader().getResourceAsStream(name)) {
      if (packaged == null) {
        throw new Cli.Refusal("--fleet: no such file " + path.toAbsolutePath().normalize());
      }
      Path copy = Files.createTempFile("heteroflow-fleet-", ".yaml");
      copy.toFile().deleteOnExit();
      Files.copy(packaged, copy, StandardCopyOption.REPLACE_EXISTING);
      return copy;
    }
  }

  /** The token is printed only when it was generated here; one from the environment is never echoed. */
  private static String adminTokenLine(String token) {
    String fromEnv = System.getenv("HETEROFLOW_ADMIN_TOKEN");
    return fromEnv != null && !fromEnv.isBlank() ? "  Admin token: from HETEROFLOW_ADMIN_TOKEN (not printed)"
        : "  Admin token: " + token;
  }

  private static String adminToken() {
    String fromEnv = System.getenv("HETEROFLOW_ADMIN_TOKEN");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromEnv.trim();
    }
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return "hfa_" + HexFormat.of().formatHex(bytes);
  }

  private static void shutdown(Vertx vertx, EmbeddedDatabase postgres) {
    shutdown(vertx, postgres, List.of());
  }

  /**
   * Closes Vert.x; {@code agentsFirst} (dev: the agents beside the control plane) are undeployed before the rest,
   * so each releases its node through a control plane still running (Vert.x alone undeploys all at once).
   */
  private static void shutdown(Vertx vertx, EmbeddedDatabase postgres, List<String> agentsFirst) {
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
