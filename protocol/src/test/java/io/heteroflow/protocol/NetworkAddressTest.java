package io.heteroflow.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * IP literals with or without a prefix: canonical text, subnets, which addresses share one, and what is refused
 * (never by looking a name up).
 */
class NetworkAddressTest {

  @Test
  void aBareAddressIsHostOnlyAndACidrKeepsItsPrefix() {
    NetworkAddress bare = NetworkAddress.parse("10.0.1.5");
    assertEquals("10.0.1.5", bare.ip());
    assertNull(bare.prefixLength());
    assertEquals(32, bare.effectivePrefixLength());
    assertEquals("10.0.1.5/32", bare.subnet());
    assertEquals("10.0.1.5", bare.toString());

    NetworkAddress cidr = NetworkAddress.parse("10.0.1.5/24");
    assertEquals("10.0.1.5", cidr.ip());
    assertEquals(24, cidr.prefixLength());
    assertEquals("10.0.1.0/24", cidr.subnet());
    assertEquals("10.0.1.5/24", cidr.toString());
    assertFalse(cidr.isIpv6());
  }

  @ParameterizedTest(name = "{0} → {1}")
  @CsvSource({
      "10.0.1.5/0, 0.0.0.0/0", "10.0.1.5/8, 10.0.0.0/8", "172.16.200.9/12, 172.16.0.0/12",
      "192.168.7.130/25, 192.168.7.128/25", "192.168.7.130/31, 192.168.7.130/31", "10.0.1.5/32, 10.0.1.5/32",
      "fd00:0:0:1::5/64, fd00:0:0:1::/64", "2001:db8:abcd:12:ffff::1/48, 2001:db8:abcd::/48",
      "fe80::1/10, fe80::/10", "::1/128, ::1/128", "2001:db8::7/0, ::/0"})
  void theSubnetKeepsTheNetworkBits(String address, String subnet) {
    assertEquals(subnet, NetworkAddress.parse(address).subnet());
  }

  @Test
  void sameSubnetComparesNetworksOfTheSamePrefixLength() {
    NetworkAddress a = NetworkAddress.parse("10.0.1.5/24");
    assertTrue(a.sameSubnet(NetworkAddress.parse("10.0.1.200/24")));
    assertTrue(a.sameSubnet(a));
    assertFalse(a.sameSubnet(NetworkAddress.parse("10.0.2.5/24")), "another /24");
    assertFalse(a.sameSubnet(NetworkAddress.parse("10.0.1.6/16")), "another prefix length: another network");
    assertFalse(a.sameSubnet(NetworkAddress.parse("10.0.1.6")), "host-only is its own /32");
    assertFalse(a.sameSubnet(null));
    assertTrue(NetworkAddress.parse("10.0.1.6").sameSubnet(NetworkAddress.parse("10.0.1.6")), "one host");
    assertFalse(NetworkAddress.parse("10.0.1.6").sameSubnet(NetworkAddress.parse("10.0.1.7")));
    assertTrue(NetworkAddress.parse("10.0.1.5/23").sameSubnet(NetworkAddress.parse("10.0.0.9/23")));
    assertTrue(NetworkAddress.parse("0.0.0.0/0").sameSubnet(NetworkAddress.parse("255.1.2.3/0")));
    // families never mix, even at prefix 0
    assertFalse(NetworkAddress.parse("10.0.0.1/0").sameSubnet(NetworkAddress.parse("::/0")));
    assertFalse(NetworkAddress.parse("::ffff:10.0.1.5/120").sameSubnet(NetworkAddress.parse("10.0.1.5/24")));
  }

  @Test
  void ipv6IsReadInEveryLiteralFormAndWrittenCanonically() {
    assertEquals("fd00::5", NetworkAddress.parse("FD00:0000:0:0:0:0:0:0005").ip());
    assertEquals("fd00::5", NetworkAddress.parse("fd00::5").ip());
    assertEquals("::", NetworkAddress.parse("::").ip());
    assertEquals("::1", NetworkAddress.parse("0:0:0:0:0:0:0:1").ip());
    assertEquals("1::", NetworkAddress.parse("1:0:0:0:0:0:0:0").ip());
    assertEquals("2001:db8:0:1:1:1:1:1", NetworkAddress.parse("2001:db8::1:1:1:1:1").ip(), "one zero group stays");
    assertEquals("2001:0:0:1::1", NetworkAddress.parse("2001:0:0:1:0:0:0:1").ip(), "the longest run is compressed");
    assertEquals("1:2:3:4:5:6:7:0", NetworkAddress.parse("1:2:3:4:5:6:7::").ip());
    assertEquals("::ffff:a00:105", NetworkAddress.parse("::ffff:10.0.1.5").ip(), "embedded IPv4");
    NetworkAddress v6 = NetworkAddress.parse("fd00:0:0:1::5/64");
    assertTrue(v6.isIpv6());
    assertEquals(128, NetworkAddress.parse("fd00::5").effectivePrefixLength());
    assertTrue(v6.sameSubnet(NetworkAddress.parse("fd00:0:0:1:ffff::9/64")));
    assertFalse(v6.sameSubnet(NetworkAddress.parse("fd00:0:0:2::5/64")));
    assertEquals(NetworkAddress.parse("fd00::5/64"), NetworkAddress.parse("FD00:0::0005/64"), "equal when canonical");
  }

  @ParameterizedTest(name = "[{index}] \"{0}\"")
  @ValueSource(strings = {"", "localhost", "node-7.example.com", "10.0.1", "10.0.1.5.6", "256.0.0.1", "10.0.01.5",
      "10.0.1.5/33", "10.0.1.5/-1", "10.0.1.5/", "10.0.1.5/24/8", "10.0.1.5/ 24", " 10.0.1.5", "10.0.1.5 ",
      "fd00::5/129", "fe80::1%eth0", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "g::1", ":1::",
      "1.2.3.4::", "::1.2.3", "[::1]", "0x0a.0.0.1", "10.0.1.5/024"})
  void anythingButAnIpLiteralWithAnOptionalPrefixIsRefused(String text) {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> NetworkAddress.parse(text));
    assertFalse(refused.getMessage().isBlank());
    assertFalse(NetworkAddress.isIpLiteral(text));
  }

  @Test
  void parseIsNeverGivenNull() {
    assertThrows(IllegalArgumentException.class, () -> NetworkAddress.parse(null));
    assertThrows(IllegalArgumentException.class, () -> new NetworkAddress("10.0.1.5/24", null), "the ip part only");
    assertThrows(IllegalArgumentException.class, () -> new NetworkAddress("10.0.1.5", 40));
    assertTrue(NetworkAddress.isIpLiteral("10.0.1.5"));
    assertFalse(NetworkAddress.isIpLiteral("10.0.1.5/24"), "a literal has no prefix");
  }
}
