package io.heteroflow.agent.gpu.vendors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** HygonDetector against real {@code hy-smi} / DTK {@code rocm-smi} output (see samples/hygon/ORIGIN.md). */
class HygonDetectorTest {
  private static final String JSON = String.join(" ", HygonDetector.JSON_COMMAND);
  private static final String GPUSTACK_JSON = "hygon/gpustack-hygon-24.04.3-rocm-smi.json";

  /** A card as the table reports it: no uuid, model or memory size. */
  private static DetectedCard row(int index, int util, int tempC) {
    return new DetectedCard(index, null, null, 0, 0, util, tempC, null);
  }

  private static List<DetectedCard> rows(int[] util, int[] tempC) {
    return IntStream.range(0, tempC.length).mapToObj(i -> row(i, util[i], tempC[i])).toList();
  }

  private static List<DetectedCard> fromTable(String output) throws ToolOutputException {
    return new HygonDetector().detect(new RecordedHost().command("hy-smi", output));
  }

  private static List<DetectedCard> fromJson(String output) throws ToolOutputException {
    return new HygonDetector().detect(new RecordedHost().command(JSON, output));
  }

  static Stream<Arguments> realTables() {
    return Stream.of(
        Arguments.of("hygon/paddlenlp-k100ai-dtk24.04.1.txt", rows(new int[4], new int[] {49, 48, 53, 49})),
        Arguments.of("hygon/flagperf-z100l-dtk23.10.1-rocm-smi.txt",
            rows(new int[8], new int[] {31, 31, 31, 30, 31, 31, 31, 30})),
        Arguments.of("hygon/paddle-docs-z100-dtk24.04.1-rocm-smi.txt", rows(new int[4], new int[] {30, 30, 29, 29})),
        Arguments.of("hygon/hcu-k100ai-hyhal-8cards.txt",
            rows(new int[8], new int[] {59, 61, 60, 59, 60, 62, 58, 58})),
        // HCU% 96.2 / 77.5 / 97.5 / 81.2 are rounded half-up.
        Arguments.of("hygon/hcu-decenc-8cards-busy.txt",
            rows(new int[] {100, 96, 78, 55, 100, 98, 81, 100}, new int[] {51, 49, 55, 56, 49, 49, 56, 58})));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realTables")
  void readsEveryRealTable(String sample, List<DetectedCard> expected) throws ToolOutputException {
    assertEquals(expected, fromTable(RecordedHost.sample(sample)));
  }

  @Test
  void readsTheRealJsonWithMemoryModelAndUniqueId() throws ToolOutputException {
    // Temperature: edge sensor (41.0) is preferred over junction (39.0) and mem (44.0).
    assertEquals(List.of(new DetectedCard(0, "7100fa8866904061", "DCU xxxx", 65520, 2, 0, 41, null)),
        fromJson(RecordedHost.sample(GPUSTACK_JSON)));
  }

  @Test
  void asksForJsonFirstThenTheTable() throws ToolOutputException {
    RecordedHost host = new RecordedHost();
    new HygonDetector().detect(host);
    assertEquals(List.of(JSON, "hy-smi"), host.ran());
    assertEquals("hy-smi -i --showmeminfo vram --showpower --showserial --showuse --showtemp --showproductname"
        + " --showuniqueid --json", JSON);
    assertEquals(GpuVendor.HYGON, new HygonDetector().vendor());
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new HygonDetector().detect(new RecordedHost()));
  }

  @Test
  void newerDtkWordingHcuUseReadsLikeDcuUse() throws ToolOutputException {
    String hcu = RecordedHost.sample(GPUSTACK_JSON).replace("\"DCU use (%)\": \"0\"", "\"HCU use (%)\": \"27.5\"");
    assertEquals(28, fromJson(hcu).get(0).utilizationPercent());
  }

  @Test
  void jsonWithMissingCommasAndRepeatedEmptyKeysStillReads() throws ToolOutputException {
    String malformed = RecordedHost.sample(GPUSTACK_JSON)
        .replace("\"80.0\",\n", "\"80.0\"\"Average GFX Core Power (W)\": \"20.0\"\n")
        .replace("\"\": \"\",", "\"\": \"\", \"\": \"\",");
    assertEquals(fromJson(RecordedHost.sample(GPUSTACK_JSON)), fromJson(malformed));
  }

  @Test
  void ansiColouredBannersAreIgnored() throws ToolOutputException {
    String real = RecordedHost.sample("hygon/paddlenlp-k100ai-dtk24.04.1.txt");
    String coloured = real.lines()
        .map(line -> line.startsWith("=") ? "\u001B[1;34m" + line + "\u001B[0m" : line)
        .reduce("", (text, line) -> text + line + "\n");
    assertEquals(fromTable(real), fromTable(coloured));
    assertEquals(fromJson(RecordedHost.sample(GPUSTACK_JSON)),
        fromJson("\u001B[32m" + RecordedHost.sample(GPUSTACK_JSON) + "\u001B[0m"));
  }

  @Test
  void refusedJsonFormFallsBackToTheTable() throws ToolOutputException {
    RecordedHost recorded =
        new RecordedHost().command("hy-smi", RecordedHost.sample("hygon/hcu-k100ai-hyhal-8cards.txt"));
    assertEquals(8, new HygonDetector().detect(refusingJson(recorded)).size());
  }

  @Test
  void refusedJsonAndUnreadableTableNamesBothProblems() {
    RecordedHost recorded = new RecordedHost().command("hy-smi", "hy-smi: error");
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> new HygonDetector().detect(refusingJson(recorded)));
    assertTrue(error.getMessage().contains("no table header") && error.getMessage().contains("exited with 2"),
        error.getMessage());
  }

  static Stream<Arguments> unreadableTables() {
    String table = RecordedHost.sample("hygon/paddlenlp-k100ai-dtk24.04.1.txt");
    return Stream.of(
        Arguments.of("empty", "", "no table header"),
        Arguments.of("garbage", "Segmentation fault", "no table header"),
        Arguments.of("cut before the closing line", table.substring(0, table.indexOf("2       53.0C")), "closing"),
        Arguments.of("cut inside a row", table.substring(0, table.indexOf("116.0W")), "does not match header"),
        Arguments.of("temperature not a number", table.replace("49.0C    118.0W", "hot      118.0W"), "'hot'"),
        Arguments.of("no DCU% column", table.replace("DCU%", "Busy"), "no DCU% column"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableTables")
  void unreadableTableIsAClearToolOutputException(String name, String output, String expectedMessagePart) {
    ToolOutputException error = assertThrows(ToolOutputException.class, () -> fromTable(output));
    assertTrue(error.getMessage().contains(expectedMessagePart), error.getMessage());
  }

  static Stream<Arguments> unreadableJson() {
    String json = RecordedHost.sample(GPUSTACK_JSON);
    return Stream.of(
        Arguments.of("cut in the middle", json.substring(0, json.indexOf("\"DCU use")), "not one complete JSON"),
        Arguments.of("outer brace missing", json.strip().substring(0, json.strip().length() - 1), "not one complete"),
        Arguments.of("no card objects", "{}", "no \"cardN\""),
        Arguments.of("not JSON", "Error: unrecognized arguments: --showserial", "not one complete JSON"),
        Arguments.of("memory key missing", json.replace("vram Total Memory (MiB)", "VRAM Total Memory (B)"),
            "has no \"vram Total Memory (MiB)\""),
        Arguments.of("memory not a number", json.replace("\"65520\"", "\"lots\""), "'lots' is not a number"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableJson")
  void unreadableJsonIsAClearToolOutputException(String name, String output, String expectedMessagePart) {
    ToolOutputException error = assertThrows(ToolOutputException.class, () -> fromJson(output));
    assertTrue(error.getMessage().contains(expectedMessagePart), error.getMessage());
  }

  @Test
  void everyTruncationOfRealOutputIsCardsOrAToolOutputException() {
    for (String sample : List.of("hygon/hcu-decenc-8cards-busy.txt", GPUSTACK_JSON)) {
      String real = RecordedHost.sample(sample);
      for (int end = 0; end < real.length(); end++) {
        String cut = real.substring(0, end);
        try {
          List<DetectedCard> cards = sample.endsWith(".json") ? fromJson(cut) : fromTable(cut);
          assertTrue(cards.size() == (sample.endsWith(".json") ? 1 : 8), "partial result from: " + cut);
        } catch (ToolOutputException expected) {
          // a clear refusal is fine; a RuntimeException or a partial card list fails the test
        }
      }
    }
  }

  /** A host whose hy-smi exits non-zero for the JSON flags, as an hy-smi that rejects one of them would. */
  private static HostProbe refusingJson(RecordedHost recorded) {
    return new HostProbe() {
      @Override
      public Optional<String> run(String... command) throws ToolOutputException {
        if (String.join(" ", command).equals(JSON)) {
          throw new ToolOutputException(JSON + " exited with 2");
        }
        return recorded.run(command);
      }

      @Override
      public Optional<String> readFile(String path) {
        return recorded.readFile(path);
      }

      @Override
      public List<String> list(String directory) {
        return recorded.list(directory);
      }
    };
  }
}
