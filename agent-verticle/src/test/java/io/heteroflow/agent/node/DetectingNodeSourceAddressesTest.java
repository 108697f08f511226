package io.heteroflow.agent.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.NetworkAddress;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;

/** This host's addresses as the detecting source reports them, and the public addresses an operator gives. */
class DetectingNodeSourceAddressesTest {

  @Test
  void internalAddressesAreIpv4InCidrFormAndLoopbackOnlyWithoutOthers() {
    List<String> ips = DetectingNodeSource.internalIps();
    for (String ip : ips) {
      NetworkAddress address = NetworkAddress.parse(ip);
      assertFalse(address.isIpv6(), ip);
      assertTrue(address.prefixLength() != null, "with its interface's prefix: " + ip);
    }
    boolean onlyLoopback = ips.stream().allMatch(ip -> ip.startsWith("127.") || ip.startsWith("169.254."));
    boolean anyLoopback = ips.stream().anyMatch(ip -> ip.startsWith("127.") || ip.startsWith("169.254."));
    assertTrue(onlyLoopback || !anyLoopback, "loopback only when nothing else exists: " + ips);
  }

  @Test
  void aPrefixLengthIsKeptWhenTheInterfaceHasAValidOne() throws Exception {
    InetAddress address = InetAddress.getByAddress(new byte[] {10, 0, 1, 5});
    assertEquals("10.0.1.5/24", DetectingNodeSource.cidr(address, (short) 24));
    assertEquals("10.0.1.5", DetectingNodeSource.cidr(address, (short) -1));
    assertEquals("10.0.1.5", DetectingNodeSource.cidr(address, (short) 64));
  }

  @Test
  void publicAddressesAreBareLiteralsInCanonicalFormOnce() {
    assertEquals(List.of("203.0.113.7", "2001:db8::7"),
        DetectingNodeSource.publicIps(List.of(" 203.0.113.7", "2001:DB8:0::7", "203.0.113.7")));
    IllegalArgumentException name = assertThrows(IllegalArgumentException.class,
        () -> DetectingNodeSource.publicIps(List.of("gpu-07.example.com")));
    assertTrue(name.getMessage().startsWith("public IP 'gpu-07.example.com': not an IP address"), name.getMessage());
    IllegalArgumentException prefixed = assertThrows(IllegalArgumentException.class,
        () -> DetectingNodeSource.publicIps(List.of("203.0.113.7/32")));
    assertTrue(prefixed.getMessage().contains("no /prefix"), prefixed.getMessage());
  }
}
