package io.heteroflow.controlplane.scheduler.gang;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.gang.NetworkDomains.NodeAddresses;
import io.heteroflow.controlplane.scheduler.gang.NetworkDomains.Wiring;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Network domains of a placed group (SPEC §9): labels first, then subnets; duplicate internal IPs split the group. */
class NetworkDomainsTest {
  private static NodeAddresses node(String id, String vendor, Map<String, String> labels, String internal,
                                    String... publicIps) {
    return new NodeAddresses(id, vendor, labels, List.of(internal), List.of(publicIps));
  }

  @Test
  void oneSubnetIsOneDomainWithRankZerosInternalAddressAndTheVendorsBackend() {
    Wiring wiring = NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24", "203.0.113.5"),
        node("b", "nvidia", Map.of(), "10.0.1.6/24", "203.0.113.6")), true);
    assertEquals(new Wiring("10.0.1.5", "nccl", 1, null), wiring);
    Wiring ascend = NetworkDomains.wire(List.of(node("a", "ascend", Map.of(), "10.0.1.5/24"),
        node("b", "ascend", Map.of(), "10.0.1.6/24")), true);
    assertEquals("hccl", ascend.backend());
  }

  @Test
  void differentSubnetsWithoutLabelsAreDifferentDomains() {
    Wiring wiring = NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24", "203.0.113.5"),
        node("b", "nvidia", Map.of(), "10.0.2.6/24", "203.0.113.6")), true);
    assertEquals(new Wiring("203.0.113.5", "gloo", 2, null), wiring);
  }

  @Test
  void labelsWinOverAddresses() {
    Map<String, String> vpc = Map.of(NetworkDomains.VPC_LABEL, "vpc-1");
    Wiring same = NetworkDomains.wire(List.of(node("a", "nvidia", vpc, "10.0.1.5/24"),
        node("b", "nvidia", vpc, "172.16.0.9/16")), true);
    assertEquals(new Wiring("10.0.1.5", "nccl", 1, null), same, "one VPC by label, whatever the subnets");
    Wiring split = NetworkDomains.wire(List.of(node("a", "nvidia", vpc, "10.0.1.5/24", "198.51.100.1"),
        node("b", "nvidia", Map.of(NetworkDomains.NETWORK_ZONE_LABEL, "east"), "10.0.1.6/24")), true);
    assertEquals(new Wiring("198.51.100.1", "gloo", 2, null), split, "labelled apart, whatever the subnet");
  }

  @Test
  void aDuplicateInternalAddressMeansTwoVpcsPublicAddressesAndGloo() {
    Wiring wiring = NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24", "203.0.113.5"),
        node("b", "nvidia", Map.of(), "10.0.1.5/24", "203.0.113.6"), node("c", "nvidia", Map.of(), "10.0.1.7/24")),
        true);
    assertEquals("203.0.113.5", wiring.masterAddr());
    assertEquals("gloo", wiring.backend());
    assertTrue(wiring.domains() >= 2, "split: " + wiring);
    assertNull(wiring.problem());
  }

  @Test
  void acrossDomainsARankZeroWithoutAPublicAddressCannotBeReached() {
    Wiring wiring = NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24"),
        node("b", "nvidia", Map.of(), "10.0.1.5/24", "203.0.113.6")), true);
    assertTrue(wiring.problem().contains("no public address"), wiring.problem());
  }

  @Test
  void nodesSimulatedOnOneHostShareTheLoopbackDomain() {
    Wiring wiring = NetworkDomains.wire(List.of(node("sim-1", "nvidia", Map.of(), "127.0.0.1"),
        node("sim-2", "nvidia", Map.of(), "127.0.0.1")), true);
    assertEquals(new Wiring("127.0.0.1", "nccl", 1, null), wiring, "loopback is never a VPC collision");
  }

  @Test
  void mixedVendorsOrNoCardsUseGlooAndMembersOnOneNodeAreOneDomain() {
    assertEquals("gloo", NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24"),
        node("b", "ascend", Map.of(), "10.0.1.6/24")), true).backend());
    assertEquals("gloo", NetworkDomains.wire(List.of(node("a", "nvidia", Map.of(), "10.0.1.5/24")), false).backend());
    NodeAddresses same = node("a", "nvidia", Map.of(), "10.0.1.5");
    assertEquals(new Wiring("10.0.1.5", "nccl", 1, null), NetworkDomains.wire(List.of(same, same), true),
        "two ranks on one node: its own address never collides with itself");
  }
}
