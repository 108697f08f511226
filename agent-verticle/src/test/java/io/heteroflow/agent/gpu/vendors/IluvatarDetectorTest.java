package io.heteroflow.agent.gpu.vendors;

import static io.heteroflow.agent.gpu.RecordedHost.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class IluvatarDetectorTest {
  private static final String CSV_QUERY = "ixsmi --format=csv,noheader"
      + " --query-gpu=index,name,memory.total,memory.used,utilization.gpu,temperature.gpu";
  private static final String TABLE = "ixsmi";
  private static final String BI_V150_X16_4_1 = sample("iluvatar/ixsmi-bi-v150x16-ixml-4.1.0.txt");

  private final IluvatarDetector detector = new IluvatarDetector();

  /** An ixsmi that refuses the CSV query (exits non-zero), as an older one might; everything else as recorded. */
  private static final class CsvRejectingHost implements HostProbe {
    private final RecordedHost recorded;
    private final List<String> ran = new ArrayList<>();

    CsvRejectingHost(RecordedHost recorded) {
      this.recorded = recorded;
    }

    @Override
    public Optional<String> run(String... command) throws ToolOutputException {
      ran.add(String.join(" ", command));
      if (String.join(" ", command).equals(CSV_QUERY)) {
        throw new ToolOutputException(CSV_QUERY + " exited with 2");
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
  }

  private static List<DetectedCard> bi150Cards(long used, int... temperatures) {
    List<DetectedCard> cards = new ArrayList<>();
    for (int index = 0; index < temperatures.length; index++) {
      cards.add(new DetectedCard(index, null, "Iluvatar BI-V150", 32768, used, 0, temperatures[index], null));
    }
    return cards;
  }

  static Stream<Arguments> realTables() {
    return Stream.of(
        Arguments.of("ixsmi-bi-v150x16-ixml-4.1.0.txt",
            bi150Cards(116, 32, 30, 31, 31, 30, 31, 31, 31, 32, 32, 31, 31, 30, 32, 30, 30)),
        Arguments.of("ixsmi-bi-v150x16-ixml-4.3.0.txt",
            bi150Cards(64, 35, 34, 35, 34, 35, 35, 34, 34, 34, 35, 34, 33, 34, 35, 35, 36)),
        Arguments.of("ixsmi-bi-v150s-single.txt",
            List.of(new DetectedCard(0, null, "Iluvatar BI-V150S", 32768, 114, 0, 33, null))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realTables")
  void readsEveryRealTableWhenTheCsvQueryIsRefused(String file, List<DetectedCard> expected) throws Exception {
    CsvRejectingHost host = new CsvRejectingHost(new RecordedHost().command(TABLE, sample("iluvatar/" + file)));
    assertEquals(expected, detector.detect(host));
    assertEquals(List.of(CSV_QUERY, TABLE), host.ran);
  }

  @Test
  void readsTheCsvQueryAndAsksNothingElse() throws Exception {
    RecordedHost host = new RecordedHost().command(CSV_QUERY, sample("iluvatar/query-gpu-csv-gpustack-docstring.csv"));
    assertEquals(List.of(
        new DetectedCard(0, null, "Iluvatar MR-V50", 16384, 116, 0, 30, null),
        new DetectedCard(1, null, "Iluvatar MR-V100", 32768, 27996, 0, 36, null)), detector.detect(host));
    assertEquals(List.of(CSV_QUERY), host.ran());
    assertEquals(GpuVendor.ILUVATAR, detector.vendor());
  }

  @Test
  void readsATablePrintedInAnswerToTheCsvQuery() throws Exception {
    RecordedHost host = new RecordedHost().command(CSV_QUERY, BI_V150_X16_4_1);
    assertEquals(16, detector.detect(host).size());
  }

  @Test
  void absentToolMeansNoCards() throws Exception {
    RecordedHost host = new RecordedHost();
    assertEquals(List.of(), detector.detect(host));
    assertEquals(List.of(CSV_QUERY), host.ran());
  }

  @Test
  void refusedQueryWithNoTableKeepsTheRefusal() {
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new CsvRejectingHost(new RecordedHost())));
    assertTrue(error.getMessage().contains("exited with 2"), error.getMessage());
  }

  @Test
  void readsNumaNodesForTheTableBusIdsLowerCased() throws Exception {
    CsvRejectingHost host = new CsvRejectingHost(new RecordedHost().command(TABLE, BI_V150_X16_4_1)
        .file("/sys/bus/pci/devices/0000:13:00.0/numa_node", "-1\n")
        .file("/sys/bus/pci/devices/0000:1c:00.0/numa_node", "0\n")
        .file("/sys/bus/pci/devices/0000:67:00.0/numa_node", "1\n"));
    List<DetectedCard> cards = detector.detect(host);
    assertEquals(null, cards.get(0).numaNode());
    assertEquals(null, cards.get(1).numaNode());
    assertEquals(0, cards.get(2).numaNode());
    assertEquals(1, cards.get(15).numaNode());
  }

  private static String cutBefore(String text, String marker) {
    return text.substring(0, text.indexOf(marker));
  }

  static Stream<Arguments> unreadableTables() {
    return Stream.of(
        Arguments.of("cut after a card's first row", cutBefore(BI_V150_X16_4_1, "| 0%   31C   P0    94W"),
            "ends early"),
        Arguments.of("cut after a separator", cutBefore(BI_V150_X16_4_1, "| 4    Iluvatar"),
            "not followed by its 'Processes:' section"),
        Arguments.of("cut inside the titles", cutBefore(BI_V150_X16_4_1, "| Fan  Temp"), "no '|===' line"),
        Arguments.of("no rows under the titles", cutBefore(BI_V150_X16_4_1, "| 0    Iluvatar"), "ends early"),
        Arguments.of("first row without second", BI_V150_X16_4_1.replace(
            "| 0%   32C   P0    N/A / N/A    | 116MiB / 32768MiB    | 0%        Default    |\n", ""),
            "line 8: card row has no second row"),
        Arguments.of("memory without slash", BI_V150_X16_4_1.replaceFirst("116MiB / 32768MiB", "116MiB 32768MiB"),
            "line 9: expected 'fan temp ...' and 'used / total'"),
        Arguments.of("temperature unreadable", BI_V150_X16_4_1.replaceFirst("32C", "hot"), "line 9: field temperature"),
        Arguments.of("index unreadable", BI_V150_X16_4_1.replaceFirst("\\| 0    Iluvatar", "| x    Iluvatar"),
            "line 8: field index"),
        Arguments.of("cells missing", BI_V150_X16_4_1.replaceFirst("\\| 0%        Default    \\|", ""),
            "line 9: expected 3 cells"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableTables")
  void unreadableTableIsAClearError(String name, String table, String expectedMessage) {
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new CsvRejectingHost(new RecordedHost().command(TABLE, table))));
    assertTrue(error.getMessage().startsWith("ixsmi "), error.getMessage());
    assertTrue(error.getMessage().contains(expectedMessage), error.getMessage());
  }

  static Stream<Arguments> unreadableCsv() {
    return Stream.of(
        Arguments.of("truncated line", "0, Iluvatar MR-V50, 16384 MiB", "line 1: expected 6"),
        Arguments.of("second line cut", "0, Iluvatar MR-V50, 16384 MiB, 116 MiB, 0 %, 30 C\n1, Iluvatar",
            "line 2: expected 6"),
        Arguments.of("temperature in F", "0, Iluvatar MR-V50, 16384 MiB, 116 MiB, 0 %, 86 F",
            "line 1: field temperature.gpu"),
        Arguments.of("garbage", "Segmentation fault", "line 1: expected 6"),
        Arguments.of("index not reported", "N/A, Iluvatar MR-V50, 16384 MiB, 116 MiB, 0 %, 30 C",
            "line 1: field index"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableCsv")
  void unreadableCsvIsAClearError(String name, String csv, String expectedMessage) {
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new RecordedHost().command(CSV_QUERY, csv)));
    assertTrue(error.getMessage().startsWith("ixsmi "), error.getMessage());
    assertTrue(error.getMessage().contains(expectedMessage), error.getMessage());
  }

  @Test
  void notReportedCsvValuesBecomeZero() throws Exception {
    RecordedHost host = new RecordedHost().command(CSV_QUERY, "0, Iluvatar MR-V50, N/A, [N/A], N/A, N/A");
    assertEquals(List.of(new DetectedCard(0, null, "Iluvatar MR-V50", 0, 0, 0, 0, null)), detector.detect(host));
  }
}
