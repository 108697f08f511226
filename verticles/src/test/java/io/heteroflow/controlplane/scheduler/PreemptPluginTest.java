package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.Nomination;
import io.heteroflow.controlplane.scheduler.framework.Occupant;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.ReasonCode;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The preempt plugin inside the pipeline: the round's two passes (asking for the nodes' occupants, then planning
 * with them), a plan staged so the next preemptor neither reuses its victims nor takes its node, an earlier
 * nomination kept, the wait threshold, and the Filter that holds a nominated node against lower priorities.
 */
class PreemptPluginTest {
  private static final SchedulingPipeline PIPELINE = BuiltInPlugins.pipeline(Fixtures.CONFIG);
  private static final PluginSet PLUGINS = BuiltInPlugins.registry(Fixtures.CONFIG).build(Map.of());
  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

  private static Occupant job(String name, int priority, int card) {
    return new Occupant(UUID.nameUUIDFromBytes(name.getBytes()), "team-b", "job", priority, true, TaskStatus.RUNNING,
        NOW.minusSeconds(3600), NOW.minusSeconds(3000), null, List.of(card), null, 0, 0, 0);
  }

  private static Occupant kept(String name, int priority, int card) {
    return new Occupant(UUID.nameUUIDFromBytes(name.getBytes()), "team-b", "job", priority, false, TaskStatus.RUNNING,
        NOW.minusSeconds(3600), NOW.minusSeconds(3000), null, List.of(card), null, 0, 0, 0);
  }

  private static Occupant member(String name, int priority, int card, UUID group) {
    return new Occupant(UUID.nameUUIDFromBytes(name.getBytes()), "team-b", "job", priority, true, TaskStatus.RUNNING,
        NOW.minusSeconds(3600), NOW.minusSeconds(3000), null, List.of(card, card + 1), null, 0, 0, 0, group);
  }

  @Test
  void aGroupIsPreemptedWholeAndCountsEveryMemberAgainstOtherPlans() {
    UUID gang = UUID.randomUUID();
    Snapshot snapshot = new Snapshot(List.of(node("g1").cards(2, "A100").busyCards(0, 1).build(),
        node("g2").cards(2, "A100").busyCards(0, 1).build(), node("s1").cards(2, "A100").busyCards(0, 1).build()));
    snapshot.occupants().begin(NOW);
    TaskRequest preemptor = task().priority(90).gpus(2).build();
    PIPELINE.decide(preemptor, snapshot, PLUGINS);
    // the group's members are the cheapest victims by priority; two single jobs of priority 30 hold s1
    snapshot.occupants().fill(Map.of("g1", List.of(member("rank0", 10, 0, gang)),
        "g2", List.of(member("rank1", 10, 0, gang)), "s1", List.of(job("a", 30, 0), job("b", 30, 1))));
    Decision decision = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    // two victims either way (rank 0 here and rank 1 on g2, or a and b): the group's priority sum 20 beats 60
    assertEquals("g1", decision.nominatedNodeId(), decision.toString());
    assertEquals(List.of(member("rank0", 10, 0, gang).taskId(), member("rank1", 10, 0, gang).taskId()),
        decision.victims(), "the whole group, its member elsewhere too");
    assertTrue(decision.plan().contains("1 member(s) elsewhere"), decision.plan());
    snapshot.nominate(new Nomination(preemptor.id(), 90, "g1", decision.plan(), true), decision.victims());
    Decision next = PIPELINE.decide(task().priority(90).gpus(2).build(), snapshot, PLUGINS);
    assertEquals("s1", next.nominatedNodeId(), "g2's member is already going, for g1: " + next);
    assertEquals(java.util.Set.of(job("a", 30, 0).taskId(), job("b", 30, 1).taskId()), java.util.Set.copyOf(next.victims()));
  }

  @Test
  void aBigGroupCostsAllItsMembers() {
    UUID gang = UUID.randomUUID();
    Snapshot snapshot = new Snapshot(List.of(node("g1").cards(2, "A100").busyCards(0, 1).build(),
        node("g2").cards(2, "A100").busyCards(0, 1).build(), node("g3").cards(2, "A100").busyCards(0, 1).build(),
        node("s1").cards(2, "A100").busyCards(0, 1).build()));
    snapshot.occupants().begin(NOW);
    TaskRequest preemptor = task().priority(90).gpus(2).build();
    PIPELINE.decide(preemptor, snapshot, PLUGINS);
    snapshot.occupants().fill(Map.of("g1", List.of(member("r0", 10, 0, gang)), "g2", List.of(member("r1", 10, 0, gang)),
        "g3", List.of(member("r2", 10, 0, gang)), "s1", List.of(job("a", 30, 0), job("b", 30, 1))));
    Decision decision = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    assertEquals("s1", decision.nominatedNodeId(), "three members count three victims, more than s1's two: " + decision);
  }

  /**
   * n1: both cards held by preemptible jobs of priority 10 and 20; n2: one card held by a preemptible job of
   * priority 5, the other by a job that is not preemptible.
   */
  private static Snapshot fleet() {
    Snapshot snapshot = new Snapshot(List.of(node("n1").cards(2, "A100").busyCards(0, 1).build(),
        node("n2").cards(2, "A100").busyCards(0, 1).build()));
    snapshot.occupants().begin(NOW);
    return snapshot;
  }

  @Test
  void aRoundAsksForOccupantsFirstThenNominatesTheMinimalSet() {
    Snapshot snapshot = fleet();
    TaskRequest preemptor = task().priority(90).gpus(2).build();
    Decision first = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    assertFalse(first.nominates(), "no occupants read yet: nothing planned");
    assertEquals(List.of(preemptor), List.copyOf(snapshot.occupants().wanted()));

    snapshot.occupants().fill(Map.of("n1", List.of(job("low", 10, 0), job("mid", 20, 1)),
        "n2", List.of(job("other", 5, 0), kept("kept", 5, 1))));
    Decision second = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    assertEquals("n1", second.nominatedNodeId(), "n2's only candidate frees one card of the two: " + second);
    assertEquals(List.of(job("low", 10, 0).taskId(), job("mid", 20, 1).taskId()), second.victims());
    assertEquals(ReasonCode.InsufficientResources, second.code(), "the pipeline's reason stays until carried out");
    assertTrue(second.plan().contains("they free 2 whole card(s)"), second.plan());

    snapshot.nominate(new Nomination(preemptor.id(), 90, "n1", second.plan(), true), second.victims());
    Decision again = PIPELINE.decide(task().priority(90).gpus(2).build(), snapshot, PLUGINS);
    assertFalse(again.nominates(), "n1's victims are taken and n2 cannot suffice: " + again);
    Decision kept = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    assertEquals("n1", kept.nominatedNodeId());
    assertEquals(List.of(), kept.victims(), "a nominated task waits for its victims, it plans nothing new");
  }

  @Test
  void trainingAndTasksThatHaveNotWaitedLongEnoughDoNotAsk() {
    Snapshot snapshot = fleet();
    PIPELINE.decide(task().type("training").priority(90).gpus(2).build(), snapshot, PLUGINS);
    assertEquals(List.of(), List.copyOf(snapshot.occupants().wanted()), "training never preempts");

    PluginSet patient = BuiltInPlugins.registry(Fixtures.CONFIG).build(Map.of("preempt",
        new PluginConfig("preempt", true, 0, Map.of("preempt_after_wait_seconds", 60))));
    PIPELINE.decide(task().priority(90).gpus(2).queuedSince(NOW.minusSeconds(10)).build(), snapshot, patient);
    assertEquals(List.of(), List.copyOf(snapshot.occupants().wanted()), "waited 10 s of 60");
    TaskRequest waited = task().priority(90).gpus(2).queuedSince(NOW.minusSeconds(61)).build();
    PIPELINE.decide(waited, snapshot, patient);
    assertEquals(List.of(waited), List.copyOf(snapshot.occupants().wanted()));

    PluginSet disabled = BuiltInPlugins.registry(Fixtures.CONFIG).build(Map.of("preempt",
        new PluginConfig("preempt", true, 0, Map.of("preempt_stage", "disabled"))));
    Snapshot other = fleet();
    PIPELINE.decide(task().priority(90).gpus(2).build(), other, disabled);
    assertEquals(List.of(), List.copyOf(other.occupants().wanted()), "preempt_stage disabled");
  }

  @Test
  void aNominatedNodeRefusesEveryOtherTaskOfLowerOrEqualPriority() {
    Snapshot snapshot = new Snapshot(List.of(node("n1").cards(2, "A100").build()));
    TaskRequest nominee = task().priority(80).gpus(2).build();
    snapshot.nominations(List.of(new Nomination(nominee.id(), 80, "n1", "plan", true)));
    Decision lower = PIPELINE.decide(task().priority(50).gpus(1).build(), snapshot, PLUGINS);
    assertEquals("0/1 nodes are available: 1 held for a preempting task of priority 80.", lower.message());
    assertFalse(PIPELINE.decide(task().priority(80).gpus(2).build(), snapshot, PLUGINS).isPlaced(),
        "an equal priority neither (as kube-scheduler treats nominated pods)");
    assertEquals("n1", PIPELINE.decide(nominee, snapshot, PLUGINS).nodeId(), "the nominee takes it, same shape or not");
    assertEquals("n1", PIPELINE.decide(task().priority(81).gpus(1).build(), snapshot, PLUGINS).nodeId(),
        "a higher priority may");
    snapshot.nominations(List.of());
    assertEquals("n1", PIPELINE.decide(task().priority(50).gpus(1).build(), snapshot, PLUGINS).nodeId(),
        "a nomination gone is seen by the memo too");
  }

  @Test
  void aNomineeWhoseVictimsHaveStoppedButFindsNoRoomPlansAgain() {
    Snapshot snapshot = fleet();
    TaskRequest preemptor = task().priority(90).gpus(2).build();
    snapshot.nominations(List.of(new Nomination(preemptor.id(), 90, "n9", "plan on a node taken since", false)));
    snapshot.occupants().fill(Map.of("n1", List.of(job("low", 10, 0), job("mid", 20, 1))));
    Decision again = PIPELINE.decide(preemptor, snapshot, PLUGINS);
    assertEquals("n1", again.nominatedNodeId(), again.toString());
    assertEquals(2, again.victims().size());
    snapshot.nominations(List.of(new Nomination(preemptor.id(), 90, "n9", "plan", true)));
    assertEquals(List.of(), PIPELINE.decide(preemptor, snapshot, PLUGINS).victims(), "while victims stop it waits");
  }
}
