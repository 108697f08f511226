package io.heteroflow.agent.node;

import com.sun.management.OperatingSystemMXBean;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.agent.gpu.topology.NvidiaTopology;
import io.heteroflow.protocol.GpuVendor;
import java.lang.management.ManagementFactory;
import java.net.Inet4Address;
import java.net.InetAddress;
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
 * operating system, and the host's non-loopback IPv4 addresses.
 */
public final class DetectingNodeSource implements NodeSource {
  private static final Logger LOG = Logger.getLogger(DetectingNodeSource.class.getName());
  private final String nodeId;
  private final HostProbe host;
  private final DetectionChain chain;
  private final Map<String, String> labels;
  private String topology;
  private boolean topologyRead;
  private List<String> lastErrors = List.of();

  public DetectingNodeSource(String nodeId, HostProbe host, DetectionChain chain, Map<String, String> labels) {
    this.nodeId = nodeId;
    this.host = host;
    this.chain = chain;
    this.labels = Map.copyOf(labels);
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
        internalIps(), labels, topology, Map.of(), null);
  }

  static List<String> internalIps() {
    List<String> ips = new ArrayList<>();
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!nic.isUp() || nic.isLoopback()) {
          continue;
        }
        for (InetAddress address : Collections.list(nic.getInetAddresses())) {
          if (address instanceof Inet4Address) {
            ips.add(address.getHostAddress());
          }
        }
      }
    } catch (SocketException e) {
      LOG.fine("cannot list network interfaces: " + e.getMessage());
    }
    return ips;
  }
}
