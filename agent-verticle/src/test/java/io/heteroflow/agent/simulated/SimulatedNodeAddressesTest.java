package io.heteroflow.agent.simulated;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.protocol.message.Heartbeat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A described node's internal (bare or CIDR) and public addresses, from a node file to its heartbeat. */
class SimulatedNodeAddressesTest {

  @Test
  void aNodeFileMayGiveCidrInternalAndBarePublicAddresses() throws Exception {
    Path file = Files.createTempFile("node-", ".yaml");
    Files.writeString(file, """
        id: gpu-07
        vendor: nvidia
        cards: 2
        internal_ips: [10.0.1.5/24, 10.0.9.5]
        public_ips: [203.0.113.7]
        """);
    SimulatedNode node = FleetFile.read(file).get(0);
    assertEquals(List.of("10.0.1.5/24", "10.0.9.5"), node.internalIps());
    assertEquals(List.of("203.0.113.7"), node.publicIps());
    NodeReading reading = node.read();
    assertEquals("10.0.1.5", reading.primaryInternalIp());
    Heartbeat beat = Heartbeat.fromJson(reading.heartbeat("gpu-07", "boot", 1, List.of()).toJson());
    assertEquals(List.of("10.0.1.5/24", "10.0.9.5"), beat.internalIps());
    assertEquals(List.of("203.0.113.7"), beat.publicIps());
  }

  @Test
  void theDefaultsStay() {
    SimulatedNode node = SimulatedNode.fromMap(Map.of("id", "n-1", "vendor", "ascend"));
    assertEquals(List.of("127.0.0.1"), node.internalIps());
    assertEquals(List.of(), node.publicIps());
    assertEquals(List.of(), node.read().heartbeat("n-1", "boot", 1, List.of()).publicIps());
  }

  @Test
  void aBadAddressNamesTheNodeAndTheEntry() {
    IllegalArgumentException internal = assertThrows(IllegalArgumentException.class, () -> SimulatedNode.fromMap(
        Map.of("id", "n-1", "vendor", "nvidia", "internal_ips", List.of("10.0.1.5/24", "gpu-07.internal"))));
    assertTrue(internal.getMessage().startsWith("node n-1: internal_ips[1] 'gpu-07.internal': not an IP address"),
        internal.getMessage());
    IllegalArgumentException prefixed = assertThrows(IllegalArgumentException.class, () -> SimulatedNode.fromMap(
        Map.of("id", "n-1", "vendor", "nvidia", "public_ips", List.of("203.0.113.7/32"))));
    assertTrue(prefixed.getMessage().contains("public_ips[0] '203.0.113.7/32': a bare IP address"),
        prefixed.getMessage());
    IllegalArgumentException notAList = assertThrows(IllegalArgumentException.class, () -> SimulatedNode.fromMap(
        Map.of("id", "n-1", "vendor", "nvidia", "public_ips", "203.0.113.7")));
    assertTrue(notAList.getMessage().contains("'public_ips' must be a list"), notAList.getMessage());
  }
}
