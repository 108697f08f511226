package io.heteroflow.agent.gpu.vendors;

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
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** KunlunDetector against recorded xpu-smi / xpu_smi output (samples/kunlun, origins in ORIGIN.md there). */
class KunlunDetectorTest {
  private static final String KUNLUNXIN_DEVICE = "/sys/bus/pci/devices/0000:03:00.0";
  private final KunlunDetector detector = new KunlunDetector();

  /** What each sample shows, card by card, read off the sample by hand. */
  record Expected(String command, String sample, String model, long totalMb, long usedMb, int[] temperatureC) {
    List<DetectedCard> cards() {
      List<DetectedCard> cards = new ArrayList<>();
      for (int i = 0; i < temperatureC.length; i++) {
        cards.add(new DetectedCard(i, null, model, totalMb, usedMb, 0, temperatureC[i], null));
      }
      return cards;
    }

    @Override
    public String toString() {
      return command + " " + sample;
    }
  }

  static Stream<Expected> samples() {
    return Stream.of(
        new Expected("xpu_smi", "p800-xpu_smi-5.0.21.21.txt", "P800 OAM", 98304, 0,
            new int[] {37, 41, 36, 36, 40, 40, 39, 40}),
        new Expected("xpu-smi", "p800-xpu-smi-515.58.txt", "P800 OAM", 98304, 100,
            new int[] {43, 37, 38, 39, 41, 36, 41, 40}),
        // old xpu_smi: no temperature column, so 0
        new Expected("xpu_smi", "r300-xpu_smi-runtime-4.31.txt", "R300", 32768, 0, new int[] {0, 0}));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void readsEveryCardOfARealSample(Expected expected) throws ToolOutputException {
    RecordedHost host = new RecordedHost().command(expected.command(), sample(expected.sample()));

    assertEquals(expected.cards(), detector.detect(host));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyCutOfASampleIsReadOrRefusedNeverACrash(Expected expected) {
    String text = sample(expected.sample());
    for (int end = 0; end <= text.length(); end++) {
      RecordedHost host = new RecordedHost().command(expected.command(), text.substring(0, end));
      try {
        detector.detect(host);
      } catch (ToolOutputException refused) {
        // a cut table may be refused; any other exception fails the test
      }
    }
  }

  @Test
  void absentToolsMeanNoCardsAfterTryingBothNames() throws ToolOutputException {
    RecordedHost host = new RecordedHost();

    assertEquals(List.of(), detector.detect(host));
    assertEquals(List.of("xpu-smi", "xpu_smi"), host.ran());
    assertEquals(GpuVendor.KUNLUN, detector.vendor());
  }

  @ParameterizedTest
  @ValueSource(strings = {"intel-xpu-smi-help.txt", "intel-xpu-smi-discovery.txt"})
  void intelsXpuSmiMeansVendorAbsent(String intelSample) throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("xpu-smi", sample(intelSample))
        .directory("/sys/bus/pci/devices", "0000:4d:00.0")
        .file("/sys/bus/pci/devices/0000:4d:00.0/vendor", "0x8086\n");

    assertEquals(List.of(), detector.detect(host));
  }

  @Test
  void intelsXpuSmiDoesNotHideKunlunxinsXpuSmi() throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("xpu-smi", sample("intel-xpu-smi-help.txt"))
        .command("xpu_smi", sample("r300-xpu_smi-runtime-4.31.txt"));

    assertEquals(List.of(0, 1), detector.detect(host).stream().map(DetectedCard::index).toList());
  }

  @Test
  void foreignOutputOnAHostWithKunlunxinPciDevicesIsAnError() {
    RecordedHost host = new RecordedHost().command("xpu-smi", sample("intel-xpu-smi-help.txt"))
        .directory("/sys/bus/pci/devices", "0000:03:00.0").file(KUNLUNXIN_DEVICE + "/vendor", "0x1d22\n");

    assertThrows(ToolOutputException.class, () -> detector.detect(host));
  }

  @Test
  void aFailingToolIsAbsentUnlessKunlunxinPciDevicesArePresent() throws ToolOutputException {
    assertEquals(List.of(), detector.detect(new FailingTool(new RecordedHost())));

    RecordedHost kunlunxinHost = new RecordedHost().directory("/sys/bus/pci/devices", "0000:03:00.0")
        .file(KUNLUNXIN_DEVICE + "/vendor", "0x1d22\n");
    ToolOutputException error = assertThrows(ToolOutputException.class,
        () -> detector.detect(new FailingTool(kunlunxinHost)));
    assertTrue(error.getMessage().contains("exited with 1"), error.getMessage());
  }

  @Test
  void numaNodeComesFromSysfsForTheBusId() throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("xpu_smi", sample("p800-xpu_smi-5.0.21.21.txt"))
        .file(KUNLUNXIN_DEVICE + "/numa_node", "0\n");

    assertEquals(0, detector.detect(host).get(0).numaNode());
  }

  static Stream<Arguments> unreadableOutputs() {
    List<String> p800 = sample("p800-xpu_smi-5.0.21.21.txt").lines().toList();
    List<String> r300 = sample("r300-xpu_smi-runtime-4.31.txt").lines().toList();
    return Stream.of(
        Arguments.of("banner and header only", firstLines(p800, 8)),
        Arguments.of("cut after a card's first row", firstLines(p800, 9)),
        Arguments.of("cut before a card's L3 row", firstLines(p800, 10)),
        Arguments.of("cut inside a row", firstLines(p800, 9) + p800.get(9).substring(0, 40) + "\n"),
        Arguments.of("memory cell garbled", String.join("\n", p800).replaceFirst("0MiB / 98304MiB", "??")),
        Arguments.of("card index not a number", String.join("\n", p800).replaceFirst("\\|   0  P800", "|   X  P800")),
        Arguments.of("legacy table without rows", firstLines(r300, 6)),
        Arguments.of("legacy row with a missing cell", firstLines(r300, 6) + "|     0 | 0000:53:00.0 | R300  |\n"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutputs")
  void unreadableKunlunxinOutputIsAToolOutputException(String what, String output) {
    assertThrows(ToolOutputException.class, () -> detector.detect(new RecordedHost().command("xpu_smi", output)));
  }

  private static String sample(String name) {
    return RecordedHost.sample("kunlun/" + name);
  }

  private static String firstLines(List<String> lines, int count) {
    return lines.subList(0, count).stream().collect(Collectors.joining("\n", "", "\n"));
  }

  /** A host whose xpu-smi exits non-zero, as LocalHostProbe reports it; files come from {@code files}. */
  private record FailingTool(HostProbe files) implements HostProbe {
    @Override
    public Optional<String> run(String... command) throws ToolOutputException {
      throw new ToolOutputException(String.join(" ", command) + " exited with 1");
    }

    @Override
    public Optional<String> readFile(String path) {
      return files.readFile(path);
    }

    @Override
    public List<String> list(String directory) {
      return files.list(directory);
    }
  }
}
