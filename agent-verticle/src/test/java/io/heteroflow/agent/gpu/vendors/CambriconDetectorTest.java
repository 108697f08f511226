package io.heteroflow.agent.gpu.vendors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** CambriconDetector against real cnmon output (samples/cambricon, see ORIGIN.md there). */
class CambriconDetectorTest {
  private static final String V5_10_13 = RecordedHost.sample("cambricon/v5.10.13.txt");

  /** What a real sample shows: one entry per card for index and temperature; the rest is the same on every card. */
  record RealSample(String file, List<Integer> indices, String model, long totalMb, long usedMb, int utilisation,
                    List<Integer> temperatures) {
    List<DetectedCard> cards() {
      return IntStream.range(0, indices.size()).mapToObj(i -> new DetectedCard(indices.get(i), null, model, totalMb,
          usedMb, utilisation, temperatures.get(i), null)).toList();
    }
  }

  static Stream<RealSample> realSamples() {
    return Stream.of(
        new RealSample("v4.20.11.txt", List.of(0, 1, 2), "MLU370-X4", 23308, 0, 0, List.of(32, 33, 30)),
        new RealSample("v5.10.10.txt", List.of(0, 1), "MLU370-X4", 23308, 0, 0, List.of(41, 41)),
        new RealSample("v5.10.13.txt", List.of(0, 1), "MLU370-X8", 23374, 0, 0, List.of(32, 39)),
        new RealSample("v5.10.22.txt", List.of(0, 1), "MLU370-X8", 20638, 0, 0, List.of(28, 32)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realSamples")
  void readsEveryCardOfARealSample(RealSample sample) throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("cnmon", RecordedHost.sample("cambricon/" + sample.file()));

    assertEquals(sample.cards(), new CambriconDetector().detect(host));
    assertEquals(List.of("cnmon"), host.ran());
  }

  @Test
  void reportsTheCambriconVendor() {
    assertEquals(GpuVendor.CAMBRICON, new CambriconDetector().vendor());
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new CambriconDetector().detect(new RecordedHost()));
  }

  @Test
  void redactedRealSampleIsRejectedNamingTheUnreadableMemory() {
    RecordedHost host = new RecordedHost().command("cnmon", RecordedHost.sample("cambricon/v5.10.31-redacted.txt"));

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new CambriconDetector().detect(host));
    assertTrue(error.getMessage().contains("xxxxx"), error.getMessage());
  }

  static Stream<Arguments> unreadableOutput() {
    return Stream.of(
        Arguments.of("empty output", ""),
        Arguments.of("an error message instead of a table", "Error: open device /dev/cambricon_ctl failed\n"),
        Arguments.of("header only", firstLines(V5_10_13, 5)),
        Arguments.of("cut after a card's first row", firstLines(V5_10_13, 7)),
        Arguments.of("cut after a card's second row", firstLines(V5_10_13, 8)),
        Arguments.of("cut inside a row", V5_10_13.substring(0, V5_10_13.indexOf("106 W/ 250 W"))),
        Arguments.of("a row missing a column", V5_10_13.replace("|         0000:39:00.0 |", "|")),
        Arguments.of("temperature not a number", V5_10_13.replace(" 32C ", " hot ")),
        Arguments.of("memory in another unit", V5_10_13.replace("0 MiB/ 23374 MiB", "0 GiB/ 22 GiB")),
        Arguments.of("no Memory-Usage column", V5_10_13.replace("Memory-Usage", "Memory-Total")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutput")
  void unreadableOutputIsAToolOutputException(String description, String output) {
    RecordedHost host = new RecordedHost().command("cnmon", output);

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new CambriconDetector().detect(host));
    assertTrue(error.getMessage().startsWith("cnmon"), error.getMessage());
  }

  private static String firstLines(String text, int count) {
    return String.join("\n", text.lines().limit(count).toList()) + "\n";
  }
}
