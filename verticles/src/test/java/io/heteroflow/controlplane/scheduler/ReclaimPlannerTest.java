package io.heteroflow.controlplane.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.scheduler.preemption.PreemptionRules;
import io.heteroflow.controlplane.scheduler.preemption.ReclaimPlanner;
import io.heteroflow.protocol.TaskStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reclaim's victim choice (SPEC §13), case by case on one node of four A100 cards, for a task of queue {@code qa}
 * (guaranteed 4) against {@code qb} and {@code qc} (guaranteed 2 each); a task on a higher card index is newer.
 * Each expected list was worked out by hand from the rules: only preemptible jobs of queues over their guarantee, any priority, lowest priority first, then
 * the queue most over its share, never taking a queue below its guarantee; fewest victims; a reclaimer that would
 * pass its own guarantee takes nothing.
 */
class ReclaimPlannerTest {
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  private static final Map<String, Double> GUARANTEED = Map.of("root", 0.0, "qa", 4.0, "qb", 2.0, "qc", 2.0);

  /** One task on the node: its queue, type, priority, whether preemptible, how long it has run, its card. */
  record Held(String name, String queue, String type, int priority, boolean preemptible, int runningSeconds,
              int card) {
    static Held job(String name, String queue, int priority, int card) {
      return new Held(name, queue, "job", priority, true, 3600, card);
    }

    Occupant occupant() {
      return new Occupant(UUID.nameUUIDFromBytes(name.getBytes()), "t", type, priority, preemptible,
          TaskStatus.RUNNING, NOW.minusSeconds(7200L - card), NOW.minusSeconds(runningSeconds), null, List.of(card),
          null, 0, 1, 1024, null, queue, 1.0);
    }
  }

  /** {@code elsewhere}: what each queue uses on other nodes, in GPU-eq; {@code reclaimerUse}: qa's use now. */
  record Case(String name, int need, double reclaimerUse, Map<String, Double> elsewhere, Duration minRuntime,
              List<Held> held, List<String> expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    return Stream.of(
        new Case("the lowest priority of an over-guarantee queue goes, whatever the reclaimer's priority", 1, 0,
            Map.of(), Duration.ZERO, List.of(Held.job("b80", "qb", 80, 0), Held.job("b20", "qb", 20, 1),
                Held.job("b50", "qb", 50, 2), Held.job("c5", "qc", 5, 3)), List.of("b20")),
        new Case("a queue within its guarantee lends nothing: its low-priority task stays", 1, 0, Map.of(),
            Duration.ZERO, List.of(Held.job("b90", "qb", 90, 0), Held.job("b95", "qb", 95, 1),
                Held.job("b99", "qb", 99, 2), Held.job("c1", "qc", 1, 3)), List.of("b90")),
        new Case("only as many as needed: two cards, the two lowest", 2, 0, Map.of(), Duration.ZERO,
            List.of(Held.job("b40", "qb", 40, 0), Held.job("b10", "qb", 10, 1), Held.job("b30", "qb", 30, 2),
                Held.job("b20", "qb", 20, 3)), List.of("b10", "b20")),
        new Case("never below the victim's guarantee: qb holds 4 of its 2, three cards cannot be reclaimed", 3, 0,
            Map.of(), Duration.ZERO, List.of(Held.job("b40", "qb", 40, 0), Held.job("b10", "qb", 10, 1),
                Held.job("b30", "qb", 30, 2), Held.job("b20", "qb", 20, 3)), List.of()),
        new Case("one priority: the queue most over its share first (qc 4/2 before qb 3/2, though b30 is newer)", 1,
            0, Map.of("qb", 2.0, "qc", 3.0), Duration.ZERO, List.of(Held.job("c30", "qc", 30, 0),
                Held.job("b30", "qb", 30, 1)), List.of("c30")),
        new Case("priority before share: qb's 10 before qc's 30 though qc is further over", 1, 0,
            Map.of("qb", 2.0, "qc", 3.0), Duration.ZERO, List.of(Held.job("b10", "qb", 10, 0),
                Held.job("c30", "qc", 30, 1)), List.of("b10")),
        new Case("training, inference and a task not preemptible are never taken", 1, 0, Map.of("qb", 3.0),
            Duration.ZERO, List.of(new Held("train", "qb", "training", 1, false, 3600, 0),
                new Held("serve", "qb", "inference", 1, false, 3600, 1), new Held("pinned", "qb", "job", 1, false,
                    3600, 2), Held.job("b70", "qb", 70, 3)), List.of("b70")),
        new Case("the protected runtime holds for reclaim too", 1, 0, Map.of(), Duration.ofSeconds(600),
            List.of(new Held("fresh", "qb", "job", 1, true, 60, 0), Held.job("b60", "qb", 60, 1),
                Held.job("b70", "qb", 70, 2)), List.of("b60")),
        new Case("a reclaimer that would pass its own guarantee takes nothing", 1, 3.5, Map.of(), Duration.ZERO,
            List.of(Held.job("b20", "qb", 20, 0), Held.job("b30", "qb", 30, 1), Held.job("b40", "qb", 40, 2)),
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void victims(Case c) {
    Fixtures.NodeBuilder builder = Fixtures.node("n1").cards(4, "A100");
    List<Occupant> here = new ArrayList<>();
    Map<String, Double> charged = new HashMap<>(c.elsewhere());
    charged.merge("qa", c.reclaimerUse(), Double::sum);
    for (Held held : c.held()) {
      builder.busyCards(held.card());
      here.add(held.occupant());
      charged.merge(held.queue(), 1.0, Double::sum);
    }
    NodeInfo node = builder.build();
    QueueShares shares = shares(charged);
    PreemptionRules rules = new PreemptionRules("running", c.minRuntime(), Duration.ZERO);
    List<String> victims = !shares.mayReclaim("qa", c.need()) ? List.of()
        : ReclaimPlanner.planNode("qa", c.need(), node, here, freed -> free(freed) >= c.need(), shares, rules, NOW)
            .map(plan -> plan.victims().stream().map(victim -> nameOf(c, victim)).toList()).orElse(List.of());
    assertEquals(c.expected(), victims);
  }

  @Test
  void theRoundsViewMovesBorrowedUseBackOnceAPlanIsStaged() {
    QueueShares shares = shares(Map.of("qb", 4.0));
    assertTrue(shares.overGuarantee().contains("qb"));
    assertTrue(shares.mayReclaim("qa", 2));
    shares.staged("qa", 2, Map.of("qb", 2.0));
    assertEquals(2.0, shares.use("qb"), 1e-9);
    assertEquals(2.0, shares.use("qa"), 1e-9);
    assertFalse(shares.overGuarantee().contains("qb"), "qb back at its guarantee: nothing more to reclaim");
    assertFalse(shares.mayReclaim("qa", 2.5), "qa would pass its guarantee");
    assertEquals(0.0, shares.use("root") - 4.0, 1e-9, "root's use is unchanged: it moved between its children");
  }

  private static QueueShares shares(Map<String, Double> charged) {
    Map<String, String> parents = new HashMap<>();
    GUARANTEED.keySet().forEach(queue -> parents.put(queue, "root".equals(queue) ? null : "root"));
    return new QueueShares(parents, GUARANTEED, charged, Map.of());
  }

  private static int free(NodeInfo node) {
    int free = 0;
    for (CardInfo card : node.cards()) {
      free += node.cardIsFree(card) ? 1 : 0;
    }
    return free;
  }

  private static String nameOf(Case c, Occupant victim) {
    return c.held().stream().filter(held -> held.occupant().taskId().equals(victim.taskId())).findFirst()
        .orElseThrow().name();
  }
}
