package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.NetworkAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a placed group's ranks reach rank 0 (SPEC §9), decided from the nodes' network domains, never guessed
 * from IP prefixes. A node's domain is its labels {@code heteroflow.network_zone} / {@code heteroflow.vpc_id}
 * when it has either, else the subnet of its first reported internal address ({@code 10.0.1.5/24}); an address
 * reported without a prefix length is a domain of its own node; loopback addresses (nodes simulated on one host)
 * are one domain. The same internal address on two nodes of one
 * group means two VPCs (private ranges collide across VPCs), so those nodes are split into domains of their own.
 * One domain: MASTER_ADDR is rank 0's internal address and the backend the vendor's collective library (NCCL,
 * HCCL, …; gloo when the members do not share one vendor or use no cards). Several: rank 0's public address and
 * gloo; a rank 0 without a public address cannot be reached, and the placement is refused.
 */
public final class NetworkDomains {
  public static final String NETWORK_ZONE_LABEL = "heteroflow.network_zone";
  public static final String VPC_LABEL = "heteroflow.vpc_id";

  private NetworkDomains() {}

  /** A member's node as its agent and its admins describe it. */
  public record NodeAddresses(String nodeId, String gpuVendor, Map<String, String> labels, List<String> internalIps,
                              List<String> publicIps) {
  }

  /** Where the ranks meet: rank 0's address, the backend, how many domains; or why they cannot ({@code problem}). */
  public record Wiring(String masterAddr, String backend, int domains, String problem) {
  }

  /** {@code members} in rank order (rank 0 first); {@code usesCards} whether any member has cards. */
  public static Wiring wire(List<NodeAddresses> members, boolean usesCards) {
    Map<String, NodeAddresses> nodes = new LinkedHashMap<>();
    members.forEach(member -> nodes.putIfAbsent(member.nodeId(), member));
    Map<String, String> domainOf = new HashMap<>();
    nodes.values().forEach(node -> domainOf.put(node.nodeId(), domain(node)));
    for (String nodeId : collidingNodes(nodes.values())) {
      domainOf.put(nodeId, "split:" + nodeId);
    }
    int domains = new HashSet<>(domainOf.values()).size();
    NodeAddresses master = members.get(0);
    if (domains == 1) {
      String internal = master.internalIps().isEmpty() ? null : address(master.internalIps().get(0));
      if (internal == null) {
        return new Wiring(null, null, 1, "node " + master.nodeId() + " (rank 0) reports no internal address");
      }
      return new Wiring(internal, backend(nodes.values(), usesCards), 1, null);
    }
    if (master.publicIps().isEmpty()) {
      return new Wiring(null, GpuVendor.CROSS_DOMAIN_BACKEND, domains, "the members span " + domains
          + " network domains and node "
          + master.nodeId() + " (rank 0) reports no public address to reach it across them");
    }
    return new Wiring(address(master.publicIps().get(0)), GpuVendor.CROSS_DOMAIN_BACKEND, domains, null);
  }

  private static String domain(NodeAddresses node) {
    String zone = node.labels().get(NETWORK_ZONE_LABEL);
    String vpc = node.labels().get(VPC_LABEL);
    if (zone != null || vpc != null) {
      return "label:" + zone + "|" + vpc;
    }
    if (node.internalIps().isEmpty()) {
      return "none:" + node.nodeId();
    }
    NetworkAddress first = parsed(node.internalIps().get(0));
    if (first != null && loopback(first)) {
      return "loopback"; // nodes simulated on one host: they all reach each other there
    }
    if (first == null || first.prefixLength() == null) {
      return "host:" + node.nodeId();
    }
    return "subnet:" + first.subnet();
  }

  /** Nodes that report an internal address another node of the group reports too. */
  private static Set<String> collidingNodes(java.util.Collection<NodeAddresses> nodes) {
    Map<String, Set<String>> holders = new HashMap<>();
    for (NodeAddresses node : nodes) {
      for (String ip : node.internalIps()) {
        NetworkAddress parsed = parsed(ip);
        String address = parsed == null || loopback(parsed) ? null : parsed.ip();
        if (address != null) {
          holders.computeIfAbsent(address, key -> new HashSet<>()).add(node.nodeId());
        }
      }
    }
    Set<String> colliding = new HashSet<>();
    holders.values().stream().filter(set -> set.size() > 1).forEach(colliding::addAll);
    return colliding;
  }

  private static String backend(java.util.Collection<NodeAddresses> nodes, boolean usesCards) {
    List<String> vendors = new ArrayList<>();
    nodes.forEach(node -> vendors.add(node.gpuVendor()));
    String vendor = vendors.get(0);
    if (!usesCards || vendor == null || vendors.stream().anyMatch(other -> !vendor.equals(other))) {
      return GpuVendor.CROSS_DOMAIN_BACKEND;
    }
    return GpuVendor.fromId(vendor).map(GpuVendor::collectiveBackend).orElse(GpuVendor.CROSS_DOMAIN_BACKEND);
  }

  /** 127.0.0.0/8 or ::1: this host only, never a collision between VPCs. */
  private static boolean loopback(NetworkAddress address) {
    return address.ip().startsWith("127.") || address.ip().equals("::1");
  }

  private static NetworkAddress parsed(String text) {
    try {
      return NetworkAddress.parse(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String address(String text) {
    NetworkAddress parsed = parsed(text);
    return parsed == null ? null : parsed.ip();
  }
}
