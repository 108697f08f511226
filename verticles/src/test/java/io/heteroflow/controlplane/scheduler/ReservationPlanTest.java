package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plan.Ending;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import io.heteroflow.controlplane.scheduler.plan.ReservationPlanner;
import io.heteroflow.controlplane.scheduler.plan.Reservations;
import io.heteroflow.controlplane.scheduler.plan.Slot;
import io.heteroflow.controlplane.scheduler.plan.Timeline;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The reservation plan (SPEC §13) on hand-built timelines: when a task or group could start, how booked slots push
 * later plans back, what is unknown, which reservations bind and what they let backfill, and the fair-share order.
 */
class ReservationPlanTest {
  private static final Instant NOW = Instant.parse("2026-12-02T03:00:00Z");

  /** A node of {@code cards} busy cards, card i held until NOW + ends[i] seconds (no entry: free now). */
  private static NodeInfo busy(String id, int cards, List<Ending> endings, long... ends) {
    int[] held = new int[ends.length];
    for (int i = 0; i < ends.length; i++) {
      held[i] = i;
      endings.add(new Ending(id, NOW.plusSeconds(ends[i]), List.of(i), null, 1, 1024));
    }
    return node(id).cards(cards, "A100").busyCards(held).build();
  }

  private static Timeline.Member member(TaskRequest task, String... nodes) {
    return new Timeline.Member(task, List.of(nodes));
  }

  private static TaskRequest cards(int count, int runtimeSeconds) {
    return task().gpus(count).build().withTenure(runtimeSeconds, runtimeSeconds, false);
  }

  @Test
  void aTaskStartsWhenItsLastNeededCardFrees() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 8, endings, 10, 20, 30, 40, 50, 60, 70, 80);
    Timeline timeline = new Timeline(List.of(n1), endings, NOW);
    Slot slot = timeline.earliest(List.of(member(cards(3, 100), "n1")));
    assertEquals(NOW.plusSeconds(30), slot.start());
    assertEquals(NOW.plusSeconds(130), slot.end());
    assertEquals(List.of(0, 1, 2), slot.takes().get("n1").cards());
  }

  @Test
  void aGroupStartsWhenEveryMemberFitsAtOnce() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 4, endings, 10, 10, 10, 10);
    NodeInfo n2 = busy("n2", 4, endings, 50, 50, 50, 50);
    Timeline timeline = new Timeline(List.of(n1, n2), endings, NOW);
    Slot slot = timeline.earliest(List.of(member(cards(4, 60), "n1", "n2"), member(cards(4, 60), "n1", "n2")));
    assertEquals(NOW.plusSeconds(50), slot.start());
    assertEquals(2, slot.takes().size(), "one member on each node");
  }

  @Test
  void aBookedSlotPushesTheNextPlanPastIt() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 4, endings, 10, 10, 10, 10);
    Timeline timeline = new Timeline(List.of(n1), endings, NOW);
    timeline.book(timeline.earliest(List.of(member(cards(4, 100), "n1"))));
    Slot next = timeline.earliest(List.of(member(cards(2, 5), "n1")));
    assertEquals(NOW.plusSeconds(110), next.start(), "after the first slot ends, not in its middle");
  }

  @Test
  void aCardHeldByATaskOfUnknownEndMakesTheStartUnknown() {
    NodeInfo n1 = node("n1").cards(2, "A100").busyCards(0, 1).build();
    Timeline timeline = new Timeline(List.of(n1), List.of(new Ending("n1", NOW.plusSeconds(5), List.of(0), null, 0, 0)),
        NOW);
    assertNull(timeline.earliest(List.of(member(cards(2, 10), "n1"))));
    assertNotNull(timeline.earliest(List.of(member(cards(1, 10), "n1"))));
  }

  @Test
  void theHeadOfEachQueueBindsAndBackfillMustEndBeforeItOrFitBesideIt() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 8, endings, 30, 30, 30, 30, 30, 30);
    Timeline timeline = new Timeline(List.of(n1), endings, NOW);
    TaskRequest head = cards(7, 100);
    TaskRequest second = cards(1, 100);
    ReservationPlanner.Plan plan = ReservationPlanner.plan(List.of(
        new ReservationPlanner.Waiting(head.id(), false, "task big", "root", NOW, List.of(member(head, "n1")), true),
        new ReservationPlanner.Waiting(second.id(), false, "task next", "root", NOW, List.of(member(second, "n1")), true)),
        timeline, Duration.ofSeconds(300), Duration.ofSeconds(5));
    assertEquals(NOW.plusSeconds(30), plan.tasks().get(0).at());
    assertEquals(NOW.plusSeconds(30), plan.tasks().get(1).at(), "the eighth card is free beside the head");
    Reservations reservations = plan.reservations();
    assertEquals(1, reservations.all().size(), "only the queue's head binds");
    assertNull(reservations.refusal(head, "n1"), "the owner itself");
    assertNull(reservations.refusal(cards(2, 25), "n1"), "ends before the reservation starts");
    TaskRequest oneLong = cards(1, 60);
    assertNull(reservations.refusal(oneLong, "n1"), "fits in the one spare card");
    reservations.staged(oneLong, Decision.placed("n1", List.of(6), null, 0));
    String refusal = reservations.refusal(cards(1, 60), "n1");
    assertNotNull(refusal, "the spare card is used up");
    assertTrue(refusal.startsWith("reserved from 03:00:30 UTC for task big"), refusal);
  }

  @Test
  void aLongWaiterPlansFirstSoNoLaterArrivalPushesItBack() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 4, endings, 10, 10, 10, 10);
    Timeline timeline = new Timeline(List.of(n1), endings, NOW);
    TaskRequest urgent = cards(4, 100);
    TaskRequest gang = cards(4, 100);
    ReservationPlanner.Plan plan = ReservationPlanner.plan(List.of(
        new ReservationPlanner.Waiting(urgent.id(), false, "task urgent", "root", NOW.minusSeconds(5),
            List.of(member(urgent, "n1")), true),
        new ReservationPlanner.Waiting(gang.id(), true, "group gang", "root", NOW.minusSeconds(400),
            List.of(member(gang, "n1")), true)), timeline, Duration.ofSeconds(300), Duration.ofSeconds(5));
    assertEquals(NOW.plusSeconds(10), plan.groups().get(0).at(), "the group waited past reserve_after: first");
    assertEquals(NOW.plusSeconds(110), plan.tasks().get(0).at());
    assertEquals(List.of("group gang"), plan.reservations().all().stream().map(Reservations.Held::label).toList(),
        "the long waiter holds its queue's one binding reservation; the urgent task only has an estimate");
  }

  @Test
  void aReservationHoldsOffWhatComesAfterItsOwnerButNotHigherPriorityUnlessTheOwnerHasWaitedLong() {
    List<Ending> endings = new ArrayList<>();
    NodeInfo n1 = busy("n1", 4, endings, 30, 30, 30, 30);
    for (boolean longWaiter : List.of(false, true)) {
      Timeline timeline = new Timeline(List.of(n1), endings, NOW);
      Instant since = longWaiter ? NOW.minusSeconds(400) : NOW.minusSeconds(10);
      TaskRequest ahead = task().priority(50).queuedSince(since.minusSeconds(5)).gpus(4).build()
          .withTenure(100, 100, false);
      TaskRequest owner = task().priority(50).queuedSince(since).gpus(4).build().withTenure(100, 100, false);
      Reservations reservations = ReservationPlanner.plan(List.of(
          new ReservationPlanner.Waiting(ahead.id(), false, "task ahead", "other", since.minusSeconds(5),
              List.of(member(ahead, "n1")), true),
          new ReservationPlanner.Waiting(owner.id(), false, "task owner", "root", since,
              List.of(member(owner, "n1")), true)), timeline, Duration.ofSeconds(300), Duration.ofSeconds(5))
          .reservations();
      assertEquals(2, reservations.all().size(), "each queue's head");
      assertNull(reservations.refusal(ahead, "n1"), "planned before the owner: the owner's slot was planned around it");
      TaskRequest urgentLater = task().priority(90).queuedSince(NOW).gpus(1).build().withTenure(60, 60, false);
      assertEquals(longWaiter, reservations.refusal(urgentLater, "n1") != null,
          "a later arrival of higher priority is held off only by a long waiter's reservation");
      TaskRequest urgentEarlier = task().priority(90).queuedSince(since.minusSeconds(1)).gpus(1).build()
          .withTenure(60, 60, false);
      assertEquals(longWaiter, reservations.refusal(urgentEarlier, "n1") != null,
          "a higher priority is held off only by a long waiter it arrived after (ahead's, not the owner's)");
      TaskRequest unplanned = task().priority(50).queuedSince(since.minusSeconds(1)).gpus(1).build()
          .withTenure(60, 60, false);
      assertNotNull(reservations.refusal(unplanned, "n1"), "what the plan did not reach comes after it");
    }
  }

  @Test
  void fairShareGivesTheNextTurnToTheQueueFurthestBelowItsWeightedShare() {
    Map<String, FairShare.Queue> tree = Map.of("root", new FairShare.Queue("root", null, 1),
        "vision", new FairShare.Queue("vision", "root", 3), "nlp", new FairShare.Queue("nlp", "root", 1));
    FairShare.Amount one = new FairShare.Amount(1, 1, 1024);
    List<String> fifo = List.of("vision-1", "vision-2", "vision-3", "vision-4", "nlp-1", "nlp-2", "nlp-3", "nlp-4");
    List<String> order = FairShare.order(fifo, name -> name.substring(0, name.indexOf('-')), name -> one, tree,
        Map.of(), new FairShare.Amount(16, 1000, 1 << 30));
    // each task is 1/16 of the cards: vision's share per unit of weight grows by 1/48 a task, nlp's by 1/16, so
    // vision takes three turns to nlp's one (a tie goes to the queue named first)
    assertEquals(List.of("nlp-1", "vision-1", "vision-2", "vision-3", "nlp-2", "vision-4", "nlp-3", "nlp-4"), order);
    List<String> busy = FairShare.order(fifo, name -> name.substring(0, name.indexOf('-')), name -> one, tree,
        Map.of("vision", new FairShare.Amount(12, 12, 12_288)), new FairShare.Amount(16, 1000, 1 << 30));
    assertEquals(List.of("nlp-1", "nlp-2", "nlp-3", "nlp-4", "vision-1", "vision-2", "vision-3", "vision-4"), busy,
        "vision already holds 12 of 16 cards (0.25 a unit of weight): nlp goes first until it holds as much");
  }

  @Test
  void oneQueueKeepsTheQueueOrder() {
    List<UUID> ids = List.of(UUID.randomUUID(), UUID.randomUUID());
    assertEquals(ids, FairShare.order(ids, id -> "root", id -> FairShare.Amount.NONE,
        Map.of("root", new FairShare.Queue("root", null, 1)), Map.of(), FairShare.Amount.NONE));
  }
}
