package io.heteroflow.launcher;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.DockerExecutor;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.LocalHostProbe;
import io.heteroflow.agent.node.DetectingNodeSource;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.FleetFile;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.launcher.bench.BenchCommand;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/** {@code heteroflow dev | server | agent}: one distribution, several roles. */
public final class Main {
  static final long HEARTBEAT_MS = 2000;
  static final Duration STOP_GRACE = Duration.ofSeconds(10);
  /** {@code dev --fleet host}: one agent for this host's real GPUs instead of simulated nodes. */
  static final String HOST_FLEET = "host";

  private Main() {}

  public static void main(String[] argv) {
    List<String> args = Arrays.asList(argv);
    String command = args.isEmpty() ? "help" : args.get(0);
    List<String> rest = args.isEmpty() ? List.of() : args.subList(1, args.size());
    try {
      switch (command) {
        case "dev" -> dev(rest);
        case "server" -> server(rest);
        case "agent" -> agent(rest);
        case "postgres" -> postgres(rest);
        case "bench" -> BenchCommand.run(rest);
        case "simulate" -> SimulateCommand.run(rest);
        case "help", "--help", "-h" -> usage();
        default -> {
          System.err.println("unknown command '" + command + "'");
          usage();
          System.exit(2);
        }
      }
    } catch (IllegalArgumentException e) {
      System.err.println("heteroflow " + command + ": " + e.getMessage());
      System.exit(2);
    } catch (Exception e) {
      System.err.println("heteroflow " + command + " failed: " + e);
      e.printStackTrace();
      System.exit(1);
    }
  }

  private static void usage() {
    System.out.println("""
        usage: java -jar heteroflow.jar <command> [options]
          dev     everything in one process: embedded PostgreSQL, control plane, simulated GPU agents
                  [--http-port 8080] [--fleet conf/fleet-dev.yaml | host] [--data-dir DIR] [--config conf/config.yaml]
                  (--fleet host: one agent for this machine's real GPUs instead of the simulated fleet)
          server  control plane on the clustered event bus against an external PostgreSQL
                  --pg-url postgresql://user:pass@host:5432/db (or HETEROFLOW_PG_URL) [--http-port 8080]
                  [--config conf/config.yaml]
                  [--cluster-host IP] [--cluster-members IP,IP] [--cluster-name NAME] [--cluster-config FILE]
          agent   one node agent (lite cluster member): detects this host's GPUs with the vendor tools, or
                  --simulate NODE_FILE; [--node-id NAME] [--executor process|docker] [--log-dir DIR]
                  [--cluster-host IP] [--cluster-members IP,IP] [--cluster-name NAME]
          postgres  only the embedded PostgreSQL, to try server/agent without installing one
                  [--port 5432] [--data-dir DIR]
        The admin token is HETEROFLOW_ADMIN_TOKEN when set, else a random one printed at start-up.""");
  }

  private static void dev(List<String> argv) throws Exception {
    Args args = new Args(argv, Set.of("--http-port", "--fleet", "--data-dir", "--config"));
    SchedulerConfig config = schedulerConfig(args);
    int port = args.port("--http-port", 8080);
    String fleetName = args.get("--fleet", null, "conf/fleet-dev.yaml");
    List<NodeSource> fleet = HOST_FLEET.equals(fleetName) ? List.of(detectingNode(hostName()))
        : List.copyOf(FleetFile.read(fleetFile(fleetName)));
    String dataDirFlag = args.get("--data-dir", null, null);
    String token = adminToken();

    EmbeddedDatabase postgres = EmbeddedDatabase.start(dataDirFlag == null ? null : Path.of(dataDirFlag));
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    Vertx vertx = ControlPlane.vertxBuilder(registry, new VertxOptions()).build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, postgres), "heteroflow-shutdown"));
    ControlPlane.Running running = await(ControlPlane.deploy(vertx, postgres.database(),
        ControlPlane.Options.defaults(port, token, config), registry));
    Path logs = postgres.taskLogs();
    await(deployAgents(vertx, fleet, logs, false));

    Database db = postgres.database();
    System.out.println("HeteroFlow dev is up.");
    System.out.println("  UI and API:  http://localhost:" + running.httpPort() + "/");
    System.out.println("  Admin token: " + token);
    System.out.println("  PostgreSQL:  postgresql://postgres:postgres@localhost:" + db.options().getPort()
        + "/postgres (data in " + postgres.root() + (dataDirFlag == null ? ", removed at exit)" : ")"));
    System.out.println("  Fleet:       " + (HOST_FLEET.equals(fleetName) ? "this host's GPUs, detected"
        : fleet.size() + " simulated nodes from " + fleetName));
    System.out.println("Press Ctrl-C to stop.");
    new CountDownLatch(1).await();
  }

  private static void server(List<String> argv) throws Exception {
    Set<String> flags = new HashSet<>(Cluster.FLAGS);
    flags.addAll(Set.of("--pg-url", "--http-port", "--config"));
    Args args = new Args(argv, flags);
    SchedulerConfig config = schedulerConfig(args);
    Database database = Database.fromUrl(args.get("--pg-url", "HETEROFLOW_PG_URL", null));
    int port = args.port("--http-port", 8080);
    String token = adminToken();
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    Vertx vertx = Cluster.join(args, false, registry);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, null), "heteroflow-shutdown"));
    ControlPlane.Running running = await(ControlPlane.deploy(vertx, database,
        ControlPlane.Options.defaults(port, token, config), registry));
    System.out.println("HeteroFlow control plane is up on http://localhost:" + running.httpPort() + "/");
    System.out.println("  Admin token: " + token);
    new CountDownLatch(1).await();
  }

  private static void agent(List<String> argv) throws Exception {
    Set<String> flags = new HashSet<>(Cluster.FLAGS);
    flags.addAll(Set.of("--simulate", "--node-id", "--executor", "--log-dir"));
    Args args = new Args(argv, flags);
    String nodeFile = args.get("--simulate", null, null);
    String executor = args.get("--executor", "HETEROFLOW_EXECUTOR", "process");
    if (!executor.equals("process") && !executor.equals("docker")) {
      throw new IllegalArgumentException("--executor must be process or docker");
    }
    List<NodeSource> nodes = nodeFile != null ? List.copyOf(FleetFile.read(Path.of(nodeFile)))
        : List.of(detectingNode(args.get("--node-id", "HETEROFLOW_NODE_ID", hostName())));
    String logDir = args.get("--log-dir", null, null);
    Path logs = logDir == null ? Files.createTempDirectory("heteroflow-agent-logs-") : Path.of(logDir);
    Vertx vertx = Cluster.join(args, true, null);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(vertx, null), "heteroflow-shutdown"));
    await(deployAgents(vertx, nodes, logs, executor.equals("docker")));
    System.out.println("HeteroFlow agent is up for " + nodes.stream().map(NodeSource::nodeId).toList()
        + " (" + executor + " executor, task logs in " + logs + ")");
    new CountDownLatch(1).await();
  }

  private static void postgres(List<String> argv) throws Exception {
    Args args = new Args(argv, Set.of("--port", "--data-dir"));
    String dataDir = args.get("--data-dir", null, null);
    EmbeddedDatabase postgres = EmbeddedDatabase.start(dataDir == null ? null : Path.of(dataDir),
        args.port("--port", 5432));
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
  }

  static Future<?> deployAgents(Vertx vertx, List<NodeSource> nodes, Path logDir, boolean docker) {
    List<Future<?>> deployments = new ArrayList<>();
    for (NodeSource node : nodes) {
      ProcessExecutor processes = new ProcessExecutor(vertx, logDir.resolve(node.nodeId()),
          ProcessExecutor.workerCountFor(node.cpuCores()), STOP_GRACE);
      TaskExecutor executor = docker ? new DockerExecutor(processes, "docker", (int) STOP_GRACE.toSeconds()) : processes;
      deployments.add(vertx.deployVerticle(new AgentVerticle(node, executor, HEARTBEAT_MS)));
    }
    return Future.all(deployments);
  }

  /** This host as a node: GPUs found by the vendor detection chain. */
  static NodeSource detectingNode(String nodeId) {
    return new DetectingNodeSource(nodeId, new LocalHostProbe(), DetectionChain.standard(), Map.of());
  }

  static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  /** {@code --config FILE}, else conf/config.yaml in the working directory, else the defaults in the jar. */
  private static SchedulerConfig schedulerConfig(Args args) throws IOException {
    String file = args.get("--config", "HETEROFLOW_CONFIG", null);
    if (file != null) {
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
        throw new IllegalArgumentException("--fleet: no such file " + name);
      }
      Path copy = Files.createTempFile("heteroflow-fleet-", ".yaml");
      copy.toFile().deleteOnExit();
      Files.copy(packaged, copy, StandardCopyOption.REPLACE_EXISTING);
      return copy;
    }
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
    try {
      vertx.close().toCompletionStage().toCompletableFuture().get();
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

  static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get();
  }
}
