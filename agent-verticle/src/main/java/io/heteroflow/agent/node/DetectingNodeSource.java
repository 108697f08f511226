package io.heteroflow.agent.node;

import com.sun.management.OperatingSystemMXBean;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.agent.gpu.topology.NvidiaTopology;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.NetworkAddress;
import java.lang.management.ManagementFactory;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * A real host: cards from the vendor detection chain (every reading), the NVLink topology label from
 * {@code nvidia-smi topo -m} (once: it does not change while the agent runs), load from the JVM's view of the
 * operating system, the host's IPv4 addresses in CIDR form with their interface's prefix length
 * ({@code 10.0.1.5/24}; loopback and link-local ones only when there is no other), and the public addresses an
 * operator gave (an agent cannot discover those: behind NAT no interface holds them).
 */
public final class DetectingNodeSource implements NodeSource {
  private static final Logger LOG = Logger.getLogger(DetectingNodeSource.class.getName());
  private final String nodeId;
  private final HostProbe host;
  private final DetectionChain chain;
  private final Map<String, String> labels;
  private final List<String> publicIps;
  private String topology;
  private boolean topologyRead;
  private List<String> lastErrors = List.of();

  public DetectingNodeSource(String nodeId, HostProbe host, DetectionChain chain, Map<String, String> labels) {
    this(nodeId, host, chain, labels, List.of());
  }

  /** {@code publicIps}: bare IP literals (an IllegalArgumentException names the first that is not one). */
  public DetectingNodeSource(String nodeId, HostProbe host, DetectionChain chain, Map<String, String> labels,
                             List<String> publicIps) {
    this.nodeId = nodeId;
    this.host = host;
    this.chain = chain;
    this.labels = Map.copyOf(labels);
    this.publicIps = publicIps(publicIps);
  }

  /** The given public addresses, each a bare IP literal in canonical form; anything else is refused, named. */
  public static List<String> publicIps(List<String> given) {
    List<String> ips = new ArrayList<>();
    for (String text : given) {
      NetworkAddress address;
      try {
        address = NetworkAddress.parse(text.trim());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("public IP '" + text + "': " + e.getMessage(), e);
      }
      if (address.prefixLength() != null) {
        throw new IllegalArgumentException("public IP '" + text + "': a bare address is required (no /prefix)");
      }
      if (!ips.contains(address.ip())) {
        ips.add(address.ip());
      }
    }
    return List.copyOf(ips);
  }

  @Override
  public String nodeId() {
    return nodeId;
  }

  @Override
  public int cpuCores() {
    return Runtime.getRuntime().availableProcessors();
  }

  @Override
  public NodeReading read() {
    DetectionChain.Detection detection = chain.detect(host);
    if (!detection.errors().equals(lastErrors)) {
      detection.errors().forEach(error -> LOG.warning("GPU detection: " + error));
      lastErrors = detection.errors();
    }
    if (detection.vendor() == GpuVendor.NVIDIA && !topologyRead) {
      topologyRead = true;
      try {
        topology = NvidiaTopology.detect(host, detection.cards().size()).orElse(null);
      } catch (ToolOutputException e) {
        LOG.warning("nvidia-smi topo -m: " + e.getMessage() + " (no NVLink data reported)");
      }
    }
    OperatingSystemMXBean os = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
    double cpu = Math.max(0, os.getCpuLoad()) * 100;
    long totalMb = os.getTotalMemorySize() / (1024 * 1024);
    long usedMb = totalMb - os.getFreeMemorySize() / (1024 * 1024);
    return new NodeReading(detection.vendor(), detection.cards(), cpuCores(), cpu, totalMb / 1024.0, usedMb,
        internalIps(), publicIps, labels, topology, Map.of(), null);
  }

  /**
   * The IPv4 addresses of the interfaces that are up, as {@code address/prefix}; loopback and link-local
   * (169.254/16) ones only when there is no other (then NodeReading's 127.0.0.1 when there is none at all).
   */
  static List<String> internalIps() {
    List<String> routable = new ArrayList<>();
    List<String> local = new ArrayList<>();
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp()) {
          continue;
        }
        for (InterfaceAddress bound : nic.getInterfaceAddresses()) {
          InetAddress address = bound.getAddress();
          if (address instanceof Inet4Address) {
            boolean hostLocal = nic.isLoopback() || address.isLoopbackAddress() || address.isLinkLocalAddress();
            (hostLocal ? local : routable).add(cidr(address, bound.getNetworkPrefixLength()));
          }
        }
      }
    } catch (SocketException e) {
      LOG.fine("cannot list network interfaces: " + e.getMessage());
    }
    return routable.isEmpty() ? local : routable;
  }

  /** {@code 10.0.1.5/24}; an interface that reports no valid prefix length gives the bare address. */
  static String cidr(InetAddress address, short prefixLength) {
    String ip = address.getHostAddress();
    return prefixLength >= 0 && prefixLength <= 32 ? ip + "/" + prefixLength : ip;
  }
}
