package io.heteroflow.controlplane.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.controlplane.service.ReplicaPlan.Action;
import io.heteroflow.controlplane.store.ReplicaSlot;
import io.heteroflow.protocol.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What one rebuild beat does to a service's slots (issue 17), table-driven with a fluent slot builder. */
class ReplicaPlanTest {
  static final Instant NOW = Instant.parse("2026-12-02T12:00:00Z");
  static final UUID SERVICE = UUID.randomUUID();

  /** A slot whose latest replica is in {@code status}, fluent. */
  static final class SlotBuilder {
    private final int slot;
    private int generation;
    private int failures;
    private TaskStatus status = TaskStatus.RUNNING;
    private String nodeStatus = "online";
    private Instant started;
    private Instant finished;

    SlotBuilder(int slot) {
      this.slot = slot;
    }

    SlotBuilder generation(int value) {
      generation = value;
      return this;
    }

    SlotBuilder failuresBefore(int value) {
      failures = value;
      return this;
    }

    SlotBuilder status(TaskStatus value) {
      status = value;
      return this;
    }

    SlotBuilder nodeOffline() {
      nodeStatus = "offline";
      return this;
    }

    /** Ended {@code agoSeconds} before now after running {@code ranSeconds}. */
    SlotBuilder ended(TaskStatus how, long agoSeconds, long ranSeconds) {
      status = how;
      finished = NOW.minusSeconds(agoSeconds);
      started = finished.minusSeconds(ranSeconds);
      return this;
    }

    ReplicaSlot build() {
      return new ReplicaSlot(SERVICE, slot, generation, failures, UUID.randomUUID(), status, "n-1", nodeStatus,
          offset(NOW.minusSeconds(3600)), offset(started), offset(finished), null, null, null, 8000, List.of(0));
    }

    private static OffsetDateTime offset(Instant at) {
      return at == null ? null : at.atOffset(ZoneOffset.UTC);
    }
  }

  static SlotBuilder slot(int index) {
    return new SlotBuilder(index);
  }

  static Arguments row(String name, int desired, boolean tenantActive, List<SlotBuilder> slots, String expected) {
    return Arguments.of(name, desired, tenantActive, slots, expected);
  }

  /** Each row: the slots read, and the actions as "KIND slot gen/failures[ rebuild]" joined by ", ". */
  static Stream<Arguments> rows() {
    return Stream.of(
        row("a new service starts every slot", 2, true, List.of(), "START 0 0/0, START 1 0/0"),
        row("a replica slow to start is never duplicated", 2, true,
            List.of(slot(0).status(TaskStatus.PENDING), slot(1).status(TaskStatus.SCHEDULED)), ""),
        row("a first quick failure is rebuilt at once", 1, true,
            List.of(slot(0).ended(TaskStatus.FAILED, 1, 5)), "START 0 1/1 rebuild"),
        row("a second quick failure waits 10 s", 1, true,
            List.of(slot(0).generation(1).failuresBefore(1).ended(TaskStatus.FAILED, 4, 5)), "WAIT 0 2/2 rebuild"),
        row("… and is rebuilt once they passed", 1, true,
            List.of(slot(0).generation(1).failuresBefore(1).ended(TaskStatus.FAILED, 11, 5)), "START 0 2/2 rebuild"),
        row("the back-off stops doubling at 5 min", 1, true,
            List.of(slot(0).generation(9).failuresBefore(9).ended(TaskStatus.FAILED, 299, 5)), "WAIT 0 10/10 rebuild"),
        row("a failure after 10 minutes of running starts the count again", 1, true,
            List.of(slot(0).generation(4).failuresBefore(4).ended(TaskStatus.FAILED, 1, 900)), "START 0 5/1 rebuild"),
        row("a replica that exited is missing: rebuilt", 1, true,
            List.of(slot(0).ended(TaskStatus.SUCCEEDED, 1, 60)), "START 0 1/0 rebuild"),
        row("a stopped replica in a wanted slot is replaced, but that is no rebuild", 1, true,
            List.of(slot(0).ended(TaskStatus.STOPPED, 1, 60)), "START 0 1/0"),
        row("scaling down stops the newest slots", 1, true,
            List.of(slot(0), slot(1), slot(2).status(TaskStatus.PENDING)), "STOP 1 0/0, STOP 2 0/0"),
        row("a replica already stopping is left to finish", 1, true,
            List.of(slot(0), slot(1).status(TaskStatus.STOPPING)), ""),
        row("a replica on an offline node is lost", 2, true,
            List.of(slot(0).nodeOffline(), slot(1).status(TaskStatus.SCHEDULED).nodeOffline()),
            "LOST 0 0/0, LOST 1 0/0"),
        row("nothing starts for an inactive tenant, scaling down still applies", 1, false,
            List.of(slot(0).ended(TaskStatus.FAILED, 1, 5), slot(1)), "STOP 1 0/0"),
        row("slots above the highest one used are started too", 3, true,
            List.of(slot(0)), "START 1 0/0, START 2 0/0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void plansTheBeat(String name, int desired, boolean tenantActive, List<SlotBuilder> slots, String expected) {
    List<ReplicaSlot> read = slots.stream().map(SlotBuilder::build).toList();
    List<String> actions = new ArrayList<>();
    for (Action action : ReplicaPlan.plan(desired, read, tenantActive, NOW)) {
      actions.add(action.kind() + " " + action.slot() + " " + action.generation() + "/" + action.failures()
          + (action.rebuild() ? " rebuild" : ""));
    }
    assertEquals(expected, String.join(", ", actions));
  }

  @ParameterizedTest(name = "after {0} quick failures in a row: {1} s")
  @MethodSource("backoffs")
  void backsOffTenSecondsDoublingToFiveMinutes(int failures, long seconds) {
    assertEquals(Duration.ofSeconds(seconds), ReplicaPlan.backoff(failures));
  }

  static Stream<Arguments> backoffs() {
    return Stream.of(Arguments.of(0, 0), Arguments.of(1, 0), Arguments.of(2, 10), Arguments.of(3, 20),
        Arguments.of(4, 40), Arguments.of(6, 160), Arguments.of(7, 300), Arguments.of(50, 300));
  }
}
