package io.heteroflow.launcher;

import com.hazelcast.config.ClasspathXmlConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.FileSystemXmlConfig;
import com.hazelcast.config.NetworkConfig;
import io.heteroflow.controlplane.ControlPlane;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.FileNotFoundException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Joins the clustered event bus (Hazelcast): conf/cluster.xml (loopback out of the box) with the host and
 * member list from {@code --cluster-host} / {@code --cluster-members} (or HETEROFLOW_CLUSTER_HOST / _MEMBERS),
 * and an optional {@code --cluster-name} so several clusters can share one network.
 * Agents join as lite members: they hold no cluster data.
 */
final class Cluster {
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
  }

  static Vertx join(Options options, boolean liteMember, PrometheusMeterRegistry registry) throws Exception {
    String host = Cli.orEnv(options.host, "HETEROFLOW_CLUSTER_HOST", "127.0.0.1");
    List<String> members = Arrays.stream(Cli.orEnv(options.members, "HETEROFLOW_CLUSTER_MEMBERS", host).split(","))
        .map(String::trim).filter(member -> !member.isEmpty()).toList();
    Config config = load(Cli.orEnv(options.config, "HETEROFLOW_CLUSTER_CONFIG", null));
    config.setLiteMember(liteMember);
    config.setClusterName(Cli.orEnv(options.name, "HETEROFLOW_CLUSTER_NAME", config.getClusterName()));
    NetworkConfig network = config.getNetworkConfig();
    if (host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
      network.getInterfaces().setEnabled(true).setInterfaces(List.of(host));
    } else {
      // a host name (e.g. a compose service): Hazelcast interfaces take addresses only
      network.getInterfaces().setEnabled(false);
      network.setPublicAddress(host);
    }
    network.getJoin().getTcpIpConfig().setEnabled(true).setMembers(members);
    VertxOptions vertxOptions = new VertxOptions();
    vertxOptions.getEventBusOptions().setHost(host);
    VertxBuilder builder = registry == null ? Vertx.builder().with(vertxOptions)
        : ControlPlane.vertxBuilder(registry, vertxOptions);
    return builder.withClusterManager(new HazelcastClusterManager(config)).buildClustered().await();
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
