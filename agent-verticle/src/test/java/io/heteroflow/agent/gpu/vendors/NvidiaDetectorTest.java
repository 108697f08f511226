package io.heteroflow.agent.gpu.vendors;

import static io.heteroflow.agent.gpu.RecordedHost.sample;
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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class NvidiaDetectorTest {
  private static final String COMMAND = "nvidia-smi"
      + " --query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu,temperature.gpu,pci.bus_id"
      + " --format=csv,noheader,nounits";
  private static final List<String> ASKED_FIELDS =
      List.of(COMMAND.split(" ")[1].substring("--query-gpu=".length()).split(","));
  private static final List<String> RTX_2080_COLUMNS = Arrays.stream(("power.limit,power.min_limit,power.max_limit,"
      + "memory.total,vbios_version,driver_version,name,gpu_uuid,power.draw,temperature.gpu,temperature.memory,"
      + "clocks.current.graphics,clocks.sm,clocks.mem,utilization.gpu,utilization.memory,fan.speed,"
      + "pcie.link.width.current,pstate").split(",")).map(field -> field.equals("gpu_uuid") ? "uuid" : field).toList();
  private static final String P100_LINE = sample("nvidia/derived-query-gpu-tesla-p100-from-xml.csv");

  private final NvidiaDetector detector = new NvidiaDetector();

  /**
   * Rewrites a real sample into the column order the detector asks for: each asked field takes the sample's value
   * when the sample has that column, the row position for a missing index, and {@code [N/A]} otherwise.
   */
  private static String inAskedOrder(List<String> sampleColumns, List<String> sampleRows) {
    List<String> lines = new ArrayList<>();
    for (int row = 0; row < sampleRows.size(); row++) {
      List<String> values = Arrays.stream(sampleRows.get(row).split(",")).map(String::strip).toList();
      List<String> line = new ArrayList<>();
      for (String field : ASKED_FIELDS) {
        int column = sampleColumns.indexOf(field);
        line.add(column >= 0 ? values.get(column) : field.equals("index") ? String.valueOf(row) : "[N/A]");
      }
      lines.add(String.join(", ", line));
    }
    return String.join("\n", lines) + "\n";
  }

  private static String headedSampleInAskedOrder(String file) {
    List<String> lines = sample(file).lines().toList();
    List<String> header = Arrays.stream(lines.get(0).split(",")).map(h -> h.replaceAll("\\[.*]", "").strip()).toList();
    return inAskedOrder(header, lines.subList(1, lines.size()));
  }

  static Stream<Arguments> realSamples() {
    return Stream.of(
        Arguments.of("tesla-p100 (netdata)", headedSampleInAskedOrder("nvidia/query-gpu-tesla-p100.csv"),
            List.of(new DetectedCard(0, "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6", "Tesla P100-PCIE-16GB",
                0, 0, 0, 37, null))),
        Arguments.of("rtx-2080 (gpu-utils#83)", inAskedOrder(RTX_2080_COLUMNS,
            sample("nvidia/query-gpu-rtx2080-noheader.txt").lines().toList()),
            List.of(new DetectedCard(0, "GPU-22b2c6ac-2d49-4863-197c-9c469071178a", "GeForce RTX 2080",
                7979, 0, 86, 45, null))),
        Arguments.of("gtx-1080ti+1060 with units (bpytop#26)",
            headedSampleInAskedOrder("nvidia/query-gpu-gtx1080ti-gtx1060-units.csv"), List.of(
                new DetectedCard(0, null, "GeForce GTX 1080 Ti", 11175, 2856, 36, 60, null),
                new DetectedCard(1, null, "GeForce GTX 1060 6GB", 6078, 4, 0, 49, null))),
        Arguments.of("tesla-p100 (netdata -q -x)", P100_LINE, List.of(
            new DetectedCard(0, "GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e", "Tesla P100-PCIE-16GB", 16384, 0, 0, 38,
                null))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realSamples")
  void readsEveryRealSample(String name, String output, List<DetectedCard> expected) throws Exception {
    assertEquals(expected, detector.detect(new RecordedHost().command(COMMAND, output)));
  }

  @Test
  void runsExactlyTheHeaderlessUnitlessQuery() throws Exception {
    RecordedHost host = new RecordedHost().command(COMMAND, P100_LINE);
    detector.detect(host);
    assertEquals(List.of(COMMAND), host.ran());
    assertEquals(GpuVendor.NVIDIA, detector.vendor());
  }

  @Test
  void asksOnlyForFieldsTheRealHelpTextLists() {
    String help = sample("nvidia/help-query-gpu.txt");
    for (String field : ASKED_FIELDS) {
      assertTrue(help.contains("\"" + field + "\""), field + " is not a --query-gpu property");
    }
  }

  @Test
  void absentToolMeansNoCards() throws Exception {
    assertEquals(List.of(), detector.detect(new RecordedHost()));
  }

  @ParameterizedTest(name = "numa_node file {0} -> {1}")
  @CsvSource(value = {"1, 1", "0, 0", "-1, ", "absent, "}, nullValues = "absent")
  void readsNumaNodeFromSysfsForTheBusId(String numaFile, Integer expected) throws Exception {
    RecordedHost host = new RecordedHost().command(COMMAND, P100_LINE);
    if (numaFile != null) {
      host.file("/sys/bus/pci/devices/0000:00:04.0/numa_node", numaFile + "\n");
    }
    assertEquals(expected, detector.detect(host).get(0).numaNode());
  }

  @Test
  void normalisesUpperCaseAndWideDomainBusIds() throws Exception {
    String line = P100_LINE.replace("00000000:00:04.0", "00000001:3B:00.0");
    RecordedHost host = new RecordedHost().command(COMMAND, line)
        .file("/sys/bus/pci/devices/0001:3b:00.0/numa_node", "1\n");
    assertEquals(1, detector.detect(host).get(0).numaNode());
  }

  @ParameterizedTest(name = "''{0}'' is not reported")
  @CsvSource({"N/A", "[N/A]", "[Not Supported]"})
  void notReportedValuesBecomeZeroOrNull(String notReported) throws Exception {
    String line = "0, " + notReported + ", Tesla P100-PCIE-16GB, " + notReported + ", " + notReported + ", "
        + notReported + ", " + notReported + ", " + notReported;
    DetectedCard card = detector.detect(new RecordedHost().command(COMMAND, line)).get(0);
    assertEquals(new DetectedCard(0, null, "Tesla P100-PCIE-16GB", 0, 0, 0, 0, null), card);
  }

  @Test
  void toleratesStrayWhitespaceCarriageReturnsBlankLinesAndCommasInNames() throws Exception {
    String output = "\r\n  0 ,GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e,  Tesla P100-PCIE-16GB ,16384 MiB, 0 MiB,"
        + "0 %, 38 ,00000000:00:04.0  \r\n\r\n"
        + "1, GPU-22b2c6ac-2d49-4863-197c-9c469071178a, GeForce RTX 2080, Rev. A, 7979, 0, 86, 45, [N/A]\r\n";
    List<DetectedCard> cards = detector.detect(new RecordedHost().command(COMMAND, output));
    assertEquals(new DetectedCard(0, "GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e", "Tesla P100-PCIE-16GB", 16384, 0, 0,
        38, null), cards.get(0));
    assertEquals("GeForce RTX 2080, Rev. A", cards.get(1).model());
    assertNull(cards.get(1).numaNode());
  }

  static Stream<Arguments> unreadableOutput() {
    String rtx2080 = "0, GPU-22b2c6ac-2d49-4863-197c-9c469071178a, GeForce RTX 2080, 7979, 0, 86, 45, 00000000:0A:00.0";
    return Stream.of(
        Arguments.of("truncated line", "0, GPU-22b2c6ac-2d49-4863-197c-9c469071178a, GeForce RTX 2080, 7979",
            "line 1: expected 8"),
        Arguments.of("second line cut", rtx2080 + "\n1, GPU-22b2c6ac", "line 2: expected 8"),
        Arguments.of("driver failure text", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA"
            + " driver. Make sure that the latest NVIDIA driver is installed and running.", "line 1: expected 8"),
        Arguments.of("non-numeric memory", rtx2080.replace("7979", "7979 GiB"), "line 1: field memory.total"),
        Arguments.of("index not reported", rtx2080.replaceFirst("0,", "N/A,"), "line 1: field index"),
        Arguments.of("huge number", rtx2080.replace("7979", "99999999999999999999"), "field memory.total"),
        Arguments.of("utilization beyond int", rtx2080.replace(" 86,", " 9999999999,"), "field utilization.gpu"),
        Arguments.of("empty name", rtx2080.replace("GeForce RTX 2080", ""), "field name"),
        Arguments.of("bad bus id", rtx2080.replace("00000000:0A:00.0", "0A:00"), "bus id '0A:00'"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutput")
  void unreadableOutputIsAClearError(String name, String output, String expectedMessage) {
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new RecordedHost().command(COMMAND, output)));
    assertTrue(error.getMessage().startsWith("nvidia-smi "), error.getMessage());
    assertTrue(error.getMessage().contains(expectedMessage), error.getMessage());
  }
}
