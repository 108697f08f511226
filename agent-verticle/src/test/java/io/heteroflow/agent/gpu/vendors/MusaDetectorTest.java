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
import org.junit.jupiter.params.provider.ValueSource;

/** MusaDetector against real {@code mthreads-gmi} output (see samples/musa/ORIGIN.md). */
class MusaDetectorTest {
  private static final String S5000 = "MTT S5000";

  private static DetectedCard card(int index, String model, long totalMb, long usedMb, int util, int tempC) {
    return new DetectedCard(index, null, model, totalMb, usedMb, util, tempC, null);
  }

  private static List<DetectedCard> detect(String output) throws ToolOutputException {
    return new MusaDetector().detect(new RecordedHost().command("mthreads-gmi", output));
  }

  static Stream<Arguments> realSamples() {
    int[] s5000Temperatures = {48, 48, 49, 48, 48, 50, 48, 49};
    return Stream.of(
        // 1.12.2, older layout; the tool itself reports used > total here (the FAQ's point), kept as printed.
        Arguments.of("musa/faq-s4000-gmi1.12.2.txt", List.of(card(0, "MTT S4000", 32768, 44302, 88, 65))),
        Arguments.of("musa/gpustack-3511-s4000-gmi2.2.0-prefix.txt", List.of(
            card(0, "MTT S4000", 49152, 0, 0, 44), card(1, "MTT S4000", 49152, 0, 0, 44))),
        Arguments.of("musa/vllm-omni-2337-s5000-gmi2.3.2-prefix.txt", List.of(
            card(0, S5000, 81920, 66641, 0, 52), card(1, S5000, 81920, 64889, 0, 51))),
        Arguments.of("musa/s5000x8-gmi2.4.1.txt", IntStream.range(0, 8)
            .mapToObj(i -> card(i, S5000, 81920, 0, 0, s5000Temperatures[i])).toList()),
        Arguments.of("musa/s80-gmi1.14.0.txt", List.of(card(0, "MTT S80", 16384, 2, 0, 49))),
        // Processes rows ("0    1123  /usr/lib/xorg/Xorg  134MiB") also start with a number: not cards.
        Arguments.of("musa/s80-gmi2.0.0-processes.txt", List.of(card(0, "MTT S80", 16384, 662, 0, 41))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("realSamples")
  void readsEveryRealSample(String sample, List<DetectedCard> expected) throws ToolOutputException {
    assertEquals(expected, detect(RecordedHost.sample(sample)));
  }

  @Test
  void runsThePlainTableCommand() throws ToolOutputException {
    RecordedHost host = new RecordedHost().command("mthreads-gmi", RecordedHost.sample("musa/s80-gmi1.14.0.txt"));
    new MusaDetector().detect(host);
    assertEquals(List.of("mthreads-gmi"), host.ran());
    assertEquals(GpuVendor.MUSA, new MusaDetector().vendor());
  }

  @Test
  void absentToolMeansNoCards() throws ToolOutputException {
    assertEquals(List.of(), new MusaDetector().detect(new RecordedHost()));
  }

  @Test
  void ansiColouredOutputReadsTheSame() throws ToolOutputException {
    String real = RecordedHost.sample("musa/faq-s4000-gmi1.12.2.txt");
    String coloured = real.replace("MTT S4000", "\u001B[1;32mMTT S4000\u001B[0m")
        .replace("88%", "\u001B[33m88%\u001B[0m");
    assertEquals(detect(real), detect(coloured));
  }

  static Stream<Arguments> unreadableOutputs() {
    String s80 = RecordedHost.sample("musa/s80-gmi1.14.0.txt");
    String faq = RecordedHost.sample("musa/faq-s4000-gmi1.12.2.txt");
    String firstLineOnly = faq.substring(0, faq.indexOf("     Physical"));
    return Stream.of(
        Arguments.of("empty", "", "no device table"),
        Arguments.of("garbage", "mthreads-gmi: error while loading shared libraries: libmtml.so", "no device table"),
        Arguments.of("cut after header", s80.substring(0, s80.indexOf("0    MTT S80")), "no card rows"),
        Arguments.of("cut after a card's first line", firstLineOnly.stripTrailing(), "ends inside the block of card 0"),
        Arguments.of("memory not used(total)", s80.replace("2MiB(16384MiB)", "2MiB/16384MiB"), "not of the form"),
        Arguments.of("memory cell missing", s80.replace("|0%    2MiB(16384MiB)", "|0%"), "expected '%GPU used(total)'"),
        Arguments.of("temperature not a number", s80.replace("|49C   YES", "|hot   YES"), "temperature 'hot'"),
        Arguments.of("second line broken", s80.replace("     Physical       |4x(16x)             |49C   YES",
            "+-----"), "no temperature cell"),
        Arguments.of("huge index", s80.replace("0    MTT S80", "99999999999    MTT S80"), "no card rows"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreadableOutputs")
  void unreadableOutputIsAClearToolOutputException(String name, String output, String expectedMessagePart) {
    ToolOutputException error = assertThrows(ToolOutputException.class, () -> detect(output));
    assertTrue(error.getMessage().contains(expectedMessagePart), error.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"musa/faq-s4000-gmi1.12.2.txt", "musa/s5000x8-gmi2.4.1.txt"})
  void everyTruncationOfARealSampleIsCardsOrAToolOutputException(String sample) {
    String real = RecordedHost.sample(sample);
    for (int end = 0; end < real.length(); end++) {
      String cut = real.substring(0, end);
      try {
        detect(cut).forEach(card -> assertTrue(card.memoryTotalMb() > 0, cut));
      } catch (ToolOutputException expected) {
        // a clear refusal is fine; anything else (RuntimeException) fails the test
      }
    }
  }
}
