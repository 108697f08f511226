package io.heteroflow.launcher;

import com.hazelcast.config.ClasspathXmlConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.FileSystemXmlConfig;
import com.hazelcast.config.NetworkConfig;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.protocol.tls.MutualTls;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Logger;
import picocli.CommandLine.Option;

/**
 * Joins the clustered event bus (Hazelcast): conf/cluster.xml (loopback out of the box) with the host and
 * member list from {@code --cluster-host} / {@code --cluster-members} (or HETEROFLOW_CLUSTER_HOST / _MEMBERS),
 * and an optional {@code --cluster-name} so several clusters can share one network. Hazelcast and the event bus
 * listen on the cluster host only (never on every interface). With {@code --certs-dir} the bus's TCP connections
 * use mutual TLS ({@link MutualTls}); without, a WARNING says the bus is unauthenticated.
 * Agents join as lite members: they hold no cluster data.
 */
final class Cluster {
  private static final Logger LOG = Logger.getLogger(Cluster.class.getName());

  private Cluster() {}

  /** The cluster options of {@code server} and {@code agent}. */
  static final class Options {
    @Option(names = "--cluster-host", paramLabel = "IP",
        description = "This member's address on the cluster network (or HETEROFLOW_CLUSTER_HOST; default 127.0.0.1).")
    String host;
    @Option(names = "--cluster-members", paramLabel = "IP,IP",
        description = "Addresses of the members to join (or HETEROFLOW_CLUSTER_MEMBERS; default: --cluster-host).")
    String members;
    @Option(names = "--cluster-name", paramLabel = "NAME",
        description = "Cluster name, so several clusters can share one network (or HETEROFLOW_CLUSTER_NAME).")
    String name;
    @Option(names = "--cluster-config", paramLabel = "FILE",
        description = "A Hazelcast XML configuration instead of conf/cluster.xml (or HETEROFLOW_CLUSTER_CONFIG).")
    String config;
    @Option(names = "--cluster-bus-port", paramLabel = "PORT",
        description = "The event bus's TCP port on --cluster-host (or HETEROFLOW_CLUSTER_BUS_PORT; default 0: a free one).")
    String busPort;
    @Option(names = "--certs-dir", paramLabel = "DIR", description = {"Mutual TLS on the event bus (or HETEROFLOW_CERTS_DIR):"
        + " DIR/ca.pem, DIR/NAME.pem, DIR/NAME-key.pem from 'heteroflow certs'. Without it the bus is unauthenticated."})
    String certsDir;
    @Option(names = "--member-name", paramLabel = "NAME",
        description = "Whose certificate in --certs-dir (or HETEROFLOW_MEMBER_NAME; default: the node id, else the host name).")
    String memberName;
  }

  static Vertx join(Options options, boolean liteMember, PrometheusMeterRegistry registry) throws Exception {
    return join(options, liteMember, registry, Main.hostName());
  }

  /** Joins with {@code defaultName}'s certificate unless {@code --member-name} names another. */
  static Vertx join(Options options, boolean liteMember, PrometheusMeterRegistry registry, String defaultName)
      throws Exception {
    String host = Cli.orEnv(options.host, "HETEROFLOW_CLUSTER_HOST", "127.0.0.1");
    int busPort = Cli.port("--cluster-bus-port", Cli.orEnv(options.busPort, "HETEROFLOW_CLUSTER_BUS_PORT", "0"));
    MutualTls tls = memberTls(options, defaultName);
    List<String> members = Arrays.stream(Cli.orEnv(options.members, "HETEROFLOW_CLUSTER_MEMBERS", host).split(","))
        .map(String::trim).filter(member -> !member.isEmpty()).toList();
    Config config = load(Cli.orEnv(options.config, "HETEROFLOW_CLUSTER_CONFIG", null));
    config.setLiteMember(liteMember);
    config.setClusterName(Cli.orEnv(options.name, "HETEROFLOW_CLUSTER_NAME", config.getClusterName()));
    NetworkConfig network = config.getNetworkConfig();
    // listen on the cluster host only: Hazelcast's default binds every interface whatever its interfaces say
    config.setProperty("hazelcast.socket.bind.any", "false");
    if (host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
      network.getInterfaces().setEnabled(true).setInterfaces(List.of(host));
    } else {
      // a host name (e.g. a compose service): Hazelcast interfaces take addresses only
      network.getInterfaces().setEnabled(true).setInterfaces(List.of(address(host)));
      network.setPublicAddress(host);
    }
    network.getJoin().getTcpIpConfig().setEnabled(true).setMembers(members);
    VertxOptions vertxOptions = new VertxOptions();
    vertxOptions.getEventBusOptions().setHost(host).setPort(busPort);
    if (tls != null) {
      tls.onEventBus(vertxOptions.getEventBusOptions());
    } else {
      LOG.warning("the event bus is unauthenticated and unencrypted: anyone who reaches " + host
          + " can send and receive every bus message; give --certs-dir (README: Securing the cluster)");
    }
    VertxBuilder builder = registry == null ? Vertx.builder().with(vertxOptions)
        : ControlPlane.vertxBuilder(registry, vertxOptions);
    return builder.withClusterManager(new HazelcastClusterManager(config)).buildClustered().await();
  }

  /** This process's TLS from --certs-dir, as --member-name or else {@code defaultName}; null without a directory. */
  static MutualTls memberTls(Options options, String defaultName) {
    return tls(Cli.orEnv(options.certsDir, "HETEROFLOW_CERTS_DIR", null),
        Cli.orEnv(options.memberName, "HETEROFLOW_MEMBER_NAME", defaultName));
  }

  /** The TLS of {@code name} from {@code certsDir}; null without a directory. */
  private static MutualTls tls(String certsDir, String name) {
    if (certsDir == null) {
      return null;
    }
    try {
      return MutualTls.fromDirectory(Path.of(certsDir), name);
    } catch (IllegalArgumentException e) {
      throw new Cli.Refusal("--certs-dir (member " + name + ", --member-name): " + e.getMessage());
    }
  }

  private static String address(String host) {
    try {
      return InetAddress.getByName(host).getHostAddress();
    } catch (UnknownHostException e) {
      throw new Cli.Refusal("--cluster-host: cannot resolve " + host);
    }
  }

  private static Config load(String file) throws FileNotFoundException {
    if (file != null) {
      if (!Files.isRegularFile(Path.of(file))) {
        throw new Cli.Refusal("--cluster-config: no such file " + Path.of(file).toAbsolutePath().normalize());
      }
      return new FileSystemXmlConfig(file);
    }
    if (Files.isRegularFile(Path.of("conf/cluster.xml"))) {
      return new FileSystemXmlConfig("conf/cluster.xml");
    }
    return new ClasspathXmlConfig("conf/cluster.xml");
  }
}
