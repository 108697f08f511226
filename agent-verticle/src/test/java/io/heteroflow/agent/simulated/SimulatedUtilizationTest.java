package io.heteroflow.agent.simulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Heartbeat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A simulated node's per-card GPU utilisation, read from its utilisation file on every reading. */
class SimulatedUtilizationTest {
  @TempDir
  Path dir;

  private static SimulatedNode node(int cards) {
    return new SimulatedNode("sim-1", GpuVendor.fromId("nvidia").orElseThrow(), "H100", cards, 81920, 32, 256, 5,
        8192, List.of(), List.of(), Map.of(), Map.of(), List.of(), null);
  }

  private static int[] utilization(SimulatedNode node) {
    return node.read().cards().stream().mapToInt(DetectedCard::utilizationPercent).toArray();
  }

  @Test
  void withoutAFileEveryCardReportsZero() {
    assertArrayEquals(new int[] {0, 0, 0}, utilization(node(3)));
    assertArrayEquals(new int[] {0, 0, 0}, utilization(node(3).withUtilizationFile(dir.resolve("absent.json"))));
  }

  @Test
  void theFileIsReReadOnEveryReadingInEachOfItsForms() throws Exception {
    Path file = dir.resolve("util.json");
    SimulatedNode node = node(4).withUtilizationFile(file);
    Map<String, int[]> table = new java.util.LinkedHashMap<>();
    table.put("{\"0\": 85, \"1\": 40}", new int[] {85, 40, 0, 0});
    table.put("{\"all\": 70}", new int[] {70, 70, 70, 70});
    table.put("{\"all\": 70, \"2\": 10}", new int[] {70, 70, 10, 70});
    table.put("70", new int[] {70, 70, 70, 70});
    table.put(" 33.6\n", new int[] {34, 34, 34, 34});
    table.put("{\"0\": 150, \"1\": -5, \"9\": 50}", new int[] {100, 0, 0, 0});
    table.put("250", new int[] {100, 100, 100, 100});
    for (Map.Entry<String, int[]> row : table.entrySet()) {
      Files.writeString(file, row.getKey());
      assertArrayEquals(row.getValue(), utilization(node), row.getKey());
    }
  }

  @Test
  void aMalformedFileKeepsZeroAndNeverThrows() throws Exception {
    Path file = dir.resolve("bad.json");
    SimulatedNode node = node(2).withUtilizationFile(file);
    for (String text : List.of("", "not json", "{\"0\": \"high\"}", "{\"gpu0\": 5}", "[1, 2]", "{\"all\": null}")) {
      Files.writeString(file, text);
      assertArrayEquals(new int[] {0, 0}, utilization(node), text);
    }
    Files.writeString(file, "{\"1\": 55}");
    assertArrayEquals(new int[] {0, 55}, utilization(node), "a fixed file is read again");
  }

  @Test
  void aFleetEntryNamesItsFileRelativeToTheFleetFileAndTheHeartbeatCarriesIt() throws Exception {
    Files.writeString(dir.resolve("gpu-07.util"), "{\"0\": 12, \"1\": 90}");
    Path fleet = dir.resolve("fleet.yaml");
    Files.writeString(fleet, """
        nodes:
          - id: gpu-07
            vendor: nvidia
            cards: 2
            utilization_file: gpu-07.util
        """);
    SimulatedNode node = FleetFile.read(fleet).get(0);
    assertEquals(dir.resolve("gpu-07.util").toAbsolutePath(), node.utilizationFile());
    NodeReading reading = node.read();
    Heartbeat beat = Heartbeat.fromJson(reading.heartbeat("gpu-07", "boot", 1, List.of()).toJson());
    assertEquals(List.of(12, 90), beat.cards().stream().map(Heartbeat.Card::utilizationPercent).toList());
  }
}
