package io.heteroflow.agent.gpu.vendors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** AscendDetector against recorded npu-smi output (samples/ascend, origins in ORIGIN.md there). */
class AscendDetectorTest {
  private final AscendDetector detector = new AscendDetector();

  /** What each sample shows, card by card, read off the sample by hand. */
  record Expected(String sample, String model, long totalMb, int[] indices, long[] usedMb, int[] aiCorePercent,
                  int[] temperatureC) {
    List<DetectedCard> cards() {
      List<DetectedCard> cards = new ArrayList<>();
      for (int i = 0; i < indices.length; i++) {
        cards.add(new DetectedCard(indices[i], null, model, totalMb, usedMb[i], aiCorePercent[i], temperatureC[i],
            null));
      }
      return cards;
    }

    @Override
    public String toString() {
      return sample;
    }
  }

  static Stream<Expected> samples() {
    return Stream.of(
        // 910B: one chip per NPU, no Device column: index = NPU id; HBM column present
        new Expected("910b2c-npu-smi-23.0.3.txt", "910B2C", 65536, ints(0, 1), longs(3317, 3316), ints(0, 0),
            ints(53, 53)),
        // 910A, "Chip Device" layout, no HBM column, power NA, NPU 4 whose Device (logic id) is 0
        new Expected("910a-npu-smi-22.0.3.txt", "910A", 21534, ints(0), longs(861), ints(0), ints(43)),
        // 910A with both Memory-Usage and HBM-Usage: HBM wins
        new Expected("910a-npu-smi-22.0.3.1.txt", "910A", 32768, ints(0, 1, 2, 3, 4, 5, 6, 7), new long[8],
            new int[8], ints(43, 38, 34, 42, 44, 33, 35, 40)),
        // 310: four chips on NPU 215, no Hugepages column
        new Expected("310-npu-smi-20.2.0.txt", "310", 8192, ints(0, 1, 2, 3), longs(2703, 2703, 2703, 2703),
            new int[4], ints(56, 57, 57, 55)),
        // 310: four chips on NPU 6 whose Device ids are 3..6
        new Expected("310-npu-smi-21.0.4.txt", "310", 8192, ints(3, 4, 5, 6), longs(2703, 2867, 2867, 2867),
            new int[4], ints(73, 74, 70, 65)),
        // 310P3, table without the npu-smi banner
        new Expected("310p3-npu-smi-table-only.txt", "310P3", 21534, ints(0, 1), longs(1074, 1070), ints(0, 0),
            ints(42, 43)),
        // A3: two chips per NPU, index = Phy-ID 0..15, power '-' on the second chip, "61609/ 65536" spacing
        new Expected("a3-npu-smi-25.2.0.txt", "Ascend910", 65536,
            ints(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            longs(61609, 61625, 61616, 61619, 61633, 61623, 61625, 61628, 61602, 61618, 61578, 61603, 61614, 61623,
                61627, 61631),
            ints(7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 7, 7, 6, 7, 7, 7),
            ints(43, 44, 45, 45, 44, 44, 43, 44, 43, 45, 47, 45, 43, 43, 44, 43)),
        // A3 with the wider columns of npu-smi 26.0 (first NPU only)
        new Expected("a3-npu-smi-26.0.rc2-first-npu.txt", "Ascend910", 65536, ints(0, 1), longs(3419, 2874),
            ints(0, 0), ints(34, 34)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void readsEveryCardOfARealSample(Expected expected) throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("npu-smi info", RecordedHost.sample("ascend/" + expected.sample()));

    assertEquals(expected.cards(), detector.detect(host));
    assertEquals(List.of("npu-smi info"), host.ran());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyCutOfASampleIsReadOrRefusedNeverACrash(Expected expected) {
    String text = RecordedHost.sample("ascend/" + expected.sample());
    for (int end = 0; end <= text.length(); end++) {
      RecordedHost host = new RecordedHost().command("npu-smi info", text.substring(0, end));
      try {
        detector.detect(host);
      } catch (ToolOutputException refused) {
        // a cut table may be refused; any other exception fails the test
      }
    }
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), detector.detect(new RecordedHost()));
    assertEquals(GpuVendor.ASCEND, detector.vendor());
  }

  @Test
  void numaNodeComesFromSysfsForTheBusId() throws ToolOutputException {
    RecordedHost host = new RecordedHost()
        .command("npu-smi info", RecordedHost.sample("ascend/910b2c-npu-smi-23.0.3.txt"))
        .file("/sys/bus/pci/devices/0000:5a:00.0/numa_node", "1\n")
        .file("/sys/bus/pci/devices/0000:29:00.0/numa_node", "-1\n");

    List<DetectedCard> cards = detector.detect(host);

    assertEquals(1, cards.get(0).numaNode());
    assertNull(cards.get(1).numaNode());
  }

  static Stream<Arguments> unreadableOutputs() {
    String b = RecordedHost.sample("ascend/910b2c-npu-smi-23.0.3.txt");
    List<String> lines = b.lines().toList();
    return Stream.of(
        Arguments.of("empty output", ""),
        Arguments.of("not a table", "dcmi module initialize failed. ret is -8005\n"),
        Arguments.of("headers only", firstLines(lines, 6)),
        Arguments.of("cut after a chip's first row", firstLines(lines, 10)),
        Arguments.of("cut inside a row", firstLines(lines, 7) + lines.get(7).substring(0, 50) + "\n"),
        Arguments.of("NPU id not a number", b.replace("| 0     910B2C", "| X     910B2C")),
        Arguments.of("temperature not a number", b.replace("89.9        53", "89.9        hot")),
        Arguments.of("memory without used / total", b.replace("3317 / 65536", "3317 of 65536")),
        Arguments.of("bus id replaced by garbage", b.replace("0000:5A:00.0", "garbage     ")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutputs")
  void unreadableOutputIsAToolOutputException(String what, String output) {
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new RecordedHost().command("npu-smi info", output)));
    assertTrue(error.getMessage().startsWith("npu-smi info"), error.getMessage());
  }

  private static String firstLines(List<String> lines, int count) {
    return lines.subList(0, count).stream().collect(Collectors.joining("\n", "", "\n"));
  }

  private static int[] ints(int... values) {
    return values;
  }

  private static long[] longs(long... values) {
    return Arrays.copyOf(values, values.length);
  }
}
