package io.heteroflow.agent.gpu.vendors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.RecordedHost;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * BirenDetector against host layouts under samples/biren/: CONSTRUCTED from the paths Biren's device plugin
 * reads (see samples/biren/ORIGIN.md), not recorded from a real host.
 */
class BirenDetectorTest {

  static Stream<Arguments> fixtures() {
    return Stream.of(
        Arguments.of("whole-cards", List.of(0, 1), List.of(0, 1)),
        Arguments.of("svi-instances", List.of(0, 1, 2, 3), List.of(0, 0, 1, 1)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fixtures")
  void reportsOneCardPerCardNode(String fixture, List<Integer> indices, List<Integer> physicalIds)
      throws Exception {
    RecordedHost host = hostFromFixture(fixture);

    List<DetectedCard> cards = new BirenDetector().detect(host);

    assertEquals(indices, cards.stream().map(DetectedCard::index).toList());
    for (int i = 0; i < cards.size(); i++) {
      assertEquals(new DetectedCard(indices.get(i), null, "Biren", 0, 0, 0, 0, null), cards.get(i));
      assertEquals(Optional.of(physicalIds.get(i)), BirenDetector.readPhysicalId(host, indices.get(i)));
    }
    assertEquals(List.of(), host.ran(), "no brsmi output is evidenced, so no tool is run");
  }

  @Test
  void noDeviceDirectoryMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new BirenDetector().detect(new RecordedHost()));
  }

  @Test
  void cardsAreOrderedByNumberAndOtherNamesIgnored() throws ToolOutputException {
    RecordedHost host = new RecordedHost().directory("/dev/biren", "card_10", "card_2", "card_x", "notes");

    assertEquals(List.of(2, 10), new BirenDetector().detect(host).stream().map(DetectedCard::index).toList());
  }

  @Test
  void missingPhysicalIdStillReportsTheCard() throws ToolOutputException {
    RecordedHost host = new RecordedHost().directory("/dev/biren", "card_0");

    assertEquals(List.of(new DetectedCard(0, null, "Biren", 0, 0, 0, 0, null)), new BirenDetector().detect(host));
  }

  @ParameterizedTest
  @MethodSource("unreadablePhysicalIds")
  void unreadablePhysicalIdIsAClearError(String content) {
    RecordedHost host = new RecordedHost().directory("/dev/biren", "card_0", "card_1")
        .file("/sys/class/biren/card_0/device/physical_id", "0\n")
        .file("/sys/class/biren/card_1/device/physical_id", content);

    ToolOutputException error = assertThrows(ToolOutputException.class, () -> new BirenDetector().detect(host));
    assertTrue(error.getMessage().contains("card_1/device/physical_id"), error.getMessage());
  }

  static Stream<String> unreadablePhysicalIds() {
    return Stream.of("", "\n", "gpu0\n", "-1\n", "0x1\n", "99999999999999\n");
  }

  @Test
  void isTheBirenVendor() {
    assertEquals(GpuVendor.BIREN, new BirenDetector().vendor());
  }

  /**
   * Every file under samples/biren/{fixture}/ becomes a host file at "/" + its relative path, every folder a
   * directory listing: samples/biren/whole-cards/dev/biren/card_0 is the host's /dev/biren/card_0.
   */
  private static RecordedHost hostFromFixture(String fixture) throws IOException, URISyntaxException {
    URL url = BirenDetectorTest.class.getClassLoader().getResource("samples/biren/" + fixture);
    Path root = Path.of(url.toURI());
    RecordedHost host = new RecordedHost();
    Map<String, List<String>> listings = new TreeMap<>();
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.filter(path -> !path.equals(root)).toList()) {
        String hostPath = "/" + root.relativize(path).toString().replace('\\', '/');
        String parent = hostPath.substring(0, Math.max(1, hostPath.lastIndexOf('/')));
        listings.computeIfAbsent(parent, key -> new ArrayList<>()).add(path.getFileName().toString());
        if (Files.isRegularFile(path)) {
          host.file(hostPath, Files.readString(path));
        }
      }
    }
    listings.forEach((directory, entries) -> host.directory(directory, entries.toArray(String[]::new)));
    return host;
  }
}
