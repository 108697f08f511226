package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which periodic message is a full heartbeat: table-driven over the changes a reading can show. */
class HeartbeatCadenceTest {
  /** A fluent reading: two 80 GB cards, 64 cores, 512 GB; each with… returns a changed copy. */
  private record Reading(List<DetectedCard> cards, double cpuPercent, long memoryUsedMb, Map<String, String> labels,
                         List<String> ips) {
    static Reading base() {
      return new Reading(List.of(card(0, 1000, 10), card(1, 2000, 20)), 30, 100_000, Map.of("pool", "a"),
          List.of("10.0.0.1/24"));
    }

    static DetectedCard card(int index, long usedMb, int utilization) {
      return new DetectedCard(index, "GPU-" + index, "H100", 81_920, usedMb, utilization, 40, 0);
    }

    Reading withCard(int index, long usedMb, int utilization) {
      List<DetectedCard> changed = new java.util.ArrayList<>(cards);
      changed.set(index, card(index, usedMb, utilization));
      return new Reading(changed, cpuPercent, memoryUsedMb, labels, ips);
    }

    NodeReading read() {
      return new NodeReading(GpuVendor.NVIDIA, cards, 64, cpuPercent, 512, memoryUsedMb, ips, labels, null, Map.of(),
          null);
    }
  }

  static Stream<Arguments> changes() {
    return Stream.of(
        Arguments.of("nothing changed", (UnaryOperator<Reading>) r -> r, false),
        Arguments.of("a card's utilisation by 4 points", (UnaryOperator<Reading>) r -> r.withCard(0, 1000, 14), false),
        Arguments.of("a card's utilisation by 5 points", (UnaryOperator<Reading>) r -> r.withCard(0, 1000, 15), true),
        Arguments.of("a card's memory by 4 % of 80 GB", (UnaryOperator<Reading>) r -> r.withCard(1, 5200, 20), false),
        Arguments.of("a card's memory by 5 % of 80 GB", (UnaryOperator<Reading>) r -> r.withCard(1, 6096, 20), true),
        Arguments.of("host CPU by 4 points", (UnaryOperator<Reading>) r -> new Reading(r.cards(), 34, r.memoryUsedMb(),
            r.labels(), r.ips()), false),
        Arguments.of("host CPU by 5 points", (UnaryOperator<Reading>) r -> new Reading(r.cards(), 35, r.memoryUsedMb(),
            r.labels(), r.ips()), true),
        Arguments.of("host memory by 5 % of 512 GB", (UnaryOperator<Reading>) r -> new Reading(r.cards(),
            r.cpuPercent(), 100_000 + 26_215, r.labels(), r.ips()), true),
        Arguments.of("a label", (UnaryOperator<Reading>) r -> new Reading(r.cards(), r.cpuPercent(), r.memoryUsedMb(),
            Map.of("pool", "b"), r.ips()), true),
        Arguments.of("an address", (UnaryOperator<Reading>) r -> new Reading(r.cards(), r.cpuPercent(),
            r.memoryUsedMb(), r.labels(), List.of("10.0.0.2/24")), true),
        Arguments.of("a card gone", (UnaryOperator<Reading>) r -> new Reading(r.cards().subList(0, 1), r.cpuPercent(),
            r.memoryUsedMb(), r.labels(), r.ips()), true));
  }

  @ParameterizedTest(name = "{0}: full = {2}")
  @MethodSource("changes")
  void aChangeTheSchedulerSeesSendsAFullHeartbeat(String change, UnaryOperator<Reading> edit, boolean full) {
    HeartbeatCadence cadence = applied(Reading.base().read());
    assertEquals(full, cadence.full(edit.apply(Reading.base()).read()), change);
  }

  @Test
  void fullUntilOneIsAppliedThenBeatsWithAFullOneEvery15th() {
    NodeReading reading = Reading.base().read();
    HeartbeatCadence cadence = new HeartbeatCadence();
    assertTrue(cadence.full(reading), "the first");
    cadence.answered(false, false, reading);
    assertTrue(cadence.full(reading), "until one is applied");
    cadence.answered(false, true, reading);
    int beats = 0;
    while (!cadence.full(reading)) {
      cadence.answered(true, true, reading);
      beats++;
    }
    assertEquals(HeartbeatCadence.FULL_EVERY - 1, beats, "beats between two full heartbeats");
  }

  @Test
  void aBeatNotAppliedOrFailedAsksForAFullHeartbeat() {
    NodeReading reading = Reading.base().read();
    HeartbeatCadence cadence = applied(reading);
    assertFalse(cadence.full(reading));
    cadence.answered(true, false, reading);
    assertTrue(cadence.full(reading), "after a beat not applied");
    cadence.answered(false, true, reading);
    assertFalse(cadence.full(reading));
    cadence.failed();
    assertTrue(cadence.full(reading), "after a failed beat");
  }

  private static HeartbeatCadence applied(NodeReading reading) {
    HeartbeatCadence cadence = new HeartbeatCadence();
    cadence.answered(false, true, reading);
    return cadence;
  }
}
