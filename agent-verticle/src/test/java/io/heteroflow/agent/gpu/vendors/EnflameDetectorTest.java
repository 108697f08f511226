package io.heteroflow.agent.gpu.vendors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** EnflameDetector against real efsmi output (samples/enflame, see its ORIGIN.md) and broken variants of it. */
class EnflameDetectorTest {
  private static final String V120 = RecordedHost.sample("enflame/efsmi-1.2.0.txt");
  private static final String V172 = RecordedHost.sample("enflame/efsmi-1.7.2.txt");

  static Stream<Arguments> realSamples() {
    return Stream.of(
        Arguments.of("efsmi 1.2.0, two S60 (temperature '39 C', Dpm, 'Disable|' without a space)", V120, List.of(
            new DetectedCard(0, "A073640510015", "S60", 49120, 0, 0, 39, null),
            new DetectedCard(1, "C807J40510285", "S60", 42976, 0, 0, 46, null))),
        Arguments.of("efsmi 1.7.2, one L300 (temperature '35', Lpm, power '68W / 300W')", V172, List.of(
            new DetectedCard(0, "A098Q50610048", "Enflame L300", 147456, 0, 0, 35, null))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realSamples")
  void readsEveryCardOfARealSample(String description, String efsmiOutput, List<DetectedCard> expected)
      throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("efsmi", efsmiOutput);

    assertEquals(expected, new EnflameDetector().detect(host));
    assertEquals(List.of("efsmi"), host.ran());
  }

  @Test
  void readsWindowsLineEndingsToo() throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("efsmi", V172.replace("\n", "\r\n"));

    assertEquals(1, new EnflameDetector().detect(host).size());
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new EnflameDetector().detect(new RecordedHost()));
  }

  @Test
  void isTheEnflameVendor() {
    assertEquals(GpuVendor.ENFLAME, new EnflameDetector().vendor());
  }

  static Stream<Arguments> unreadableOutputs() {
    return Stream.of(
        Arguments.of("empty output", "", "no card rows"),
        Arguments.of("not a table", "efsmi: error while loading shared libraries\n", "no card rows"),
        Arguments.of("banner only", V120.substring(0, V120.indexOf("+2024")), "no card rows"),
        Arguments.of("cut inside a device row", V120.substring(0, V120.indexOf("33.6.5")), "truncated"),
        Arguments.of("cut after a device row", V120.substring(0, V120.indexOf("| 46 C")), "card '1'"),
        Arguments.of("cut inside a statistics row", V172.substring(0, V172.indexOf("147456MiB")), "truncated"),
        Arguments.of("statistics row missing", V120.replace(
            "| 39 C   Sleep    105W  300W | 49120MiB Disable|   0.0%      A073640510015 |\n", ""), "card '0'"),
        Arguments.of("temperature not a number", V120.replace("39 C", "?? C"), "TEMP"),
        Arguments.of("memory not in MiB", V172.replace("147456MiB", "144GB    "), "Mem"),
        Arguments.of("DUsed not a percentage", V172.replace("0%          A098", "N/A         A098"), "DUsed"),
        Arguments.of("serial number missing", V172.replace("A098Q50610048", "             "), "empty cells"),
        Arguments.of("index not a number", V172.replace("| 0      Enflame", "| x      Enflame"), "DEV index"),
        Arguments.of("name missing", V172.replace("Enflame L300", "            "), "NAME"),
        Arguments.of("same card twice", V120.replace("| 1      S60", "| 0      S60"), "twice"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutputs")
  void unreadableOutputIsAClearError(String description, String efsmiOutput, String messagePart) {
    RecordedHost host = new RecordedHost().command("efsmi", efsmiOutput);

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new EnflameDetector().detect(host));
    assertTrue(error.getMessage().contains("efsmi") && error.getMessage().contains(messagePart),
        () -> "message should name efsmi and '" + messagePart + "': " + error.getMessage());
  }
}
