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
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** MetaxDetector against real mx-smi output (samples/metax, see ORIGIN.md there). */
class MetaxDetectorTest {
  private static final String V2_2_4 = RecordedHost.sample("metax/mx-smi-2.2.4-metax-c550.txt");

  /** What a real sample shows: one temperature per GPU (indices 0..n-1); the rest is the same on every GPU. */
  record RealSample(String file, String model, long totalMb, long usedMb, int utilisation, List<Integer> temperatures) {
    List<DetectedCard> cards() {
      return IntStream.range(0, temperatures.size()).mapToObj(i -> new DetectedCard(i, null, model, totalMb, usedMb,
          utilisation, temperatures.get(i), null)).toList();
    }
  }

  static Stream<RealSample> realSamples() {
    return Stream.of(
        new RealSample("mx-smi-2.1.6-mxc550.txt", "MXC550", 65536, 810, 0, List.of(31, 31, 31, 31, 30, 31, 30, 30)),
        new RealSample("mx-smi-2.2.4-metax-c550.txt", "MXC550", 65536, 858, 0, List.of(29, 29, 30, 29, 30, 32, 32, 31)),
        new RealSample("mx-smi-2.2.9-metax-c500.txt", "MXC500", 65536, 826, 0, List.of(35, 37, 36, 35, 33, 34, 34, 36)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realSamples")
  void readsEveryGpuOfARealSample(RealSample sample) throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("mx-smi", RecordedHost.sample("metax/" + sample.file()));

    assertEquals(sample.cards(), new MetaxDetector().detect(host));
    assertEquals(List.of("mx-smi"), host.ran());
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"MXC550, MXC550", "MetaX C550, MXC550", "MetaX C500, MXC500", "MXC600-A, MXC600-A"})
  void bothModelSpellingsBecomeTheCompactOne(String printed, String normalised) {
    assertEquals(normalised, MetaxDetector.normalisedModel(printed));
  }

  @Test
  void reportsTheMetaxVendor() {
    assertEquals(GpuVendor.METAX, new MetaxDetector().vendor());
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new MetaxDetector().detect(new RecordedHost()));
  }

  @Test
  void realOutputCutAfterTwoOfEightGpusIsRejected() {
    RecordedHost host = new RecordedHost().command("mx-smi",
        RecordedHost.sample("metax/mx-smi-2.1.12-metax-c500-cut.txt"));

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new MetaxDetector().detect(host));
    assertTrue(error.getMessage().contains("8 attached GPUs but its table lists 2"), error.getMessage());
  }

  static Stream<Arguments> unreadableOutput() {
    return Stream.of(
        Arguments.of("empty output", ""),
        Arguments.of("an error message instead of a table", "mx-smi: failed to initialize the management library\n"),
        Arguments.of("header only", firstLines(V2_2_4, 13)),
        Arguments.of("cut after a GPU's first row", firstLines(V2_2_4, 14)),
        Arguments.of("cut after a GPU's second row", firstLines(V2_2_4, 15)),
        Arguments.of("cut inside a row", V2_2_4.substring(0, V2_2_4.indexOf("53W / 450W"))),
        Arguments.of("a row missing a column", V2_2_4.replace("| 0000:0f:00.0        |", "|")),
        Arguments.of("utilisation not a number", V2_2_4.replace("| 0%   ", "| idle ")),
        Arguments.of("memory in another unit", V2_2_4.replace("858/65536 MiB", "1/64 GiB     ")),
        Arguments.of("no Temp column", V2_2_4.replace("| Temp ", "| Heat ")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutput")
  void unreadableOutputIsAToolOutputException(String description, String output) {
    RecordedHost host = new RecordedHost().command("mx-smi", output);

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new MetaxDetector().detect(host));
    assertTrue(error.getMessage().startsWith("mx-smi"), error.getMessage());
  }

  private static String firstLines(String text, int count) {
    return String.join("\n", text.lines().limit(count).toList()) + "\n";
  }
}
