package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.message.Heartbeat;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.StoreFixture;
import java.time.OffsetDateTime;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Heartbeats applied idempotently, liveness by receipt time, no mass eviction when everything goes quiet, and one
 * live agent process (boot id) holding each node.
 */
class NodeStoreTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static Heartbeat.Card card(int index, long memoryMb) {
    return new Heartbeat.Card(index, null, null, memoryMb, 0, 0, 0, null);
  }

  /** {@code beat} with these cards, built past the decoder's limits. */
  private static Heartbeat withCards(Heartbeat beat, List<Heartbeat.Card> cards) {
    return new Heartbeat(beat.nodeId(), beat.bootId(), beat.seq(), beat.gpuVendor(), beat.cpuCores(), beat.cpuPercent(),
        beat.memoryTotalGb(), beat.memoryUsedMb(), cards, beat.activeTasks(), beat.internalIps(), beat.publicIps(),
        beat.labels(), beat.topology(), beat.location(), beat.dedicatedTenant());
  }

  private static JsonObject beat(String node, String boot, long seq, double cpu) {
    return new JsonObject().put("node_id", node).put("boot_id", boot).put("seq", seq).put("gpu_vendor", "nvidia")
        .put("cpu_cores", 8).put("cpu_percent", cpu).put("memory_total_gb", 64.0).put("memory_used_mb", 1024)
        .put("cards", new JsonArray().add(new JsonObject().put("index", 0).put("memory_total_mb", 1000)))
        .put("location", new JsonObject().put("rack", "from-agent"));
  }

  @Test
  void anOlderSequenceNeverOverwritesANewerOne() throws Exception {
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-1", "boot-a", 5, 10)))));
    assertFalse(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-1", "boot-a", 4, 99)))), "late heartbeat ignored");
    assertFalse(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-1", "boot-a", 5, 99)))), "duplicate ignored");
    assertEquals(10.0, await(store.nodes.get("hb-1")).orElseThrow().info().cpuPercent());
    silence("hb-1", 7);
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-1", "boot-b", 1, 20)))), "a restarted agent starts over");
    assertEquals(20.0, await(store.nodes.get("hb-1")).orElseThrow().info().cpuPercent());
  }

  @Test
  void heartbeatsArrivingTogetherShareTransactionsAndEachGetsItsOwnAnswer() throws Exception {
    List<Future<Boolean>> answers = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      answers.add(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("burst-" + (i % 50), "b", 1 + i / 50, i))));
    }
    Future<Boolean> stale = store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("burst-0", "b", 2, -1)));
    // HeartbeatLimits refuses a repeated index on the bus; the store still copes with one (defence in depth)
    Future<Boolean> cards = store.nodes.applyHeartbeat(withCards(Heartbeat.fromJson(beat("burst-cards", "b", 1, 1)),
        List.of(card(0, 1000), card(1, 2000), card(1, 3000))));
    await(Future.join(answers));
    assertTrue(answers.stream().allMatch(Future::result), "every heartbeat was newer than the stored one");
    assertFalse(await(stale), "a heartbeat no newer than the stored one changes nothing");
    assertTrue(await(cards));
    for (int node = 0; node < 50; node++) {
      assertEquals(150.0 + node, await(store.nodes.get("burst-" + node)).orElseThrow().info().cpuPercent(),
          "the newest of four heartbeats wins");
    }
    assertEquals(List.of(1000L, 3000L), await(store.nodes.get("burst-cards")).orElseThrow().info().cards().stream()
        .map(card -> card.memoryTotalMb()).toList(), "a repeated card index: the last report wins");
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("burst-cards", "b", 2, 1)))));
    assertEquals(1, await(store.nodes.get("burst-cards")).orElseThrow().info().cards().size(), "a vanished card goes");
  }

  @Test
  void aMalformedHeartbeatIsRefusedAloneAndTheRestOfItsBatchIsWritten() throws Exception {
    Future<Boolean> first = store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("mal-0", "b", 1, 0))); // the others queue behind it
    List<Future<Boolean>> good = new ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      good.add(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("mal-" + i, "b", 1, i))));
    }
    // HeartbeatLimits refuses a negative index on the bus; past it, PostgreSQL's check still refuses it alone
    Future<Boolean> refusedByPostgres = store.nodes.applyHeartbeat(withCards(
        Heartbeat.fromJson(beat("mal-bad-card", "b", 1, 1)), List.of(card(-1, 1000))));
    for (int i = 21; i <= 40; i++) {
      good.add(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("mal-" + i, "b", 1, i))));
    }
    await(Future.join(first, Future.join(good), refusedByPostgres).otherwiseEmpty());
    assertTrue(await(first));
    assertTrue(good.stream().allMatch(f -> f.succeeded() && f.result()), "every good heartbeat of the batch applied");
    assertEquals(41, store.count("SELECT count(*) FROM nodes WHERE id LIKE 'mal-%' AND id NOT LIKE 'mal-bad%'"));
    for (Future<Boolean> bad : List.of(refusedByPostgres)) {
      assertTrue(bad.failed(), "the malformed heartbeat is refused");
      assertTrue(bad.cause() instanceof IllegalArgumentException, "refused as the sender's fault: " + bad.cause());
    }
    assertEquals(0, store.count("SELECT count(*) FROM nodes WHERE id LIKE 'mal-bad%'"));
  }

  @Test
  void anAdminsLocationIsNeverOverwrittenByHeartbeats() throws Exception {
    await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-2", "b", 1, 1))));
    assertEquals("from-agent", await(store.nodes.get("hb-2")).orElseThrow().info().rack());
    await(store.nodes.setLocation("hb-2", "r", "z", "admin-rack"));
    await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("hb-2", "b", 2, 1))));
    assertEquals("admin-rack", await(store.nodes.get("hb-2")).orElseThrow().info().rack());
  }

  @Test
  void silentNodesGoOfflineButNeverAllAtOnce() throws Exception {
    for (String node : List.of("live-1", "live-2", "live-3")) {
      await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat(node, "b", 1, 1))));
    }
    store.query("UPDATE nodes SET last_heartbeat_at = now() - interval '1 hour' WHERE status <> 'offline'");
    NodeStore.Sweep everyone = await(store.nodes.markSilentNodesOffline(15));
    assertTrue(everyone.everyNodeSilent());
    assertEquals(List.of(), everyone.markedOffline(), "a control-plane-side disruption evicts nobody");

    await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("live-1", "b", 2, 1))));
    NodeStore.Sweep some = await(store.nodes.markSilentNodesOffline(15));
    assertFalse(some.everyNodeSilent());
    assertTrue(some.markedOffline().containsAll(List.of("live-2", "live-3")));
    assertFalse(some.markedOffline().contains("live-1"));
    assertEquals("offline", await(store.nodes.get("live-2")).orElseThrow().info().status());
    await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("live-2", "b", 2, 1))));
    assertEquals("online", await(store.nodes.get("live-2")).orElseThrow().info().status(), "back with its next heartbeat");
  }

  /** The node's last heartbeat {@code seconds} ago, as if its agent process had gone silent since. */
  private static void silence(String node, int seconds) throws Exception {
    store.query("UPDATE nodes SET last_heartbeat_at = now() - make_interval(secs => $2) WHERE id = $1", node,
        (double) seconds);
  }

  private static String bootOf(String node) throws Exception {
    return store.query("SELECT boot_id FROM nodes WHERE id = $1", node).iterator().next().getString(0);
  }

  private static NodeHeldException refusedAsHeld(Future<Boolean> answer) throws Exception {
    await(answer.otherwiseEmpty());
    assertTrue(answer.failed(), "refused while another agent process holds the node, got " + answer.result());
    assertTrue(answer.cause() instanceof NodeHeldException, "refused as held: " + answer.cause());
    return (NodeHeldException) answer.cause();
  }

  private static Future<Boolean> heartbeat(String node, String boot, long seq, double cpu) {
    return store.nodes.applyHeartbeat(Heartbeat.fromJson(beat(node, boot, seq, cpu)));
  }

  @Test
  void aNodeHeldByALiveAgentProcessRefusesAnotherBootAndNamesTheNodeAndSinceWhen() throws Exception {
    assertTrue(await(heartbeat("held-1", "boot-a", 1, 10)));
    OffsetDateTime since = store.query("SELECT boot_seen_at FROM nodes WHERE id = 'held-1'").iterator().next()
        .getOffsetDateTime(0);
    assertTrue(await(heartbeat("held-1", "boot-a", 2, 11)));
    NodeHeldException held = refusedAsHeld(heartbeat("held-1", "boot-b", 1, 99));
    assertTrue(held.getMessage().startsWith("node_held: node held-1 is held by another live agent process since "
        + since.toInstant()), held.getMessage());
    assertFalse(held.getMessage().contains("boot-a"), "the holder's boot id is not told: " + held.getMessage());
    assertEquals(since.toInstant(), held.heldSince().toInstant());
    assertEquals("boot-a", bootOf("held-1"));
    assertEquals(11.0, await(store.nodes.get("held-1")).orElseThrow().info().cpuPercent(), "nothing written");
    silence("held-1", 4);
    refusedAsHeld(heartbeat("held-1", "boot-b", 2, 99)); // a holder that missed a heartbeat keeps its node
    assertTrue(await(heartbeat("held-1", "boot-a", 3, 12)), "the holder keeps heartbeating");
    assertFalse(await(store.nodes.release("held-1", "boot-b")), "only the holder may release the node");
    refusedAsHeld(heartbeat("held-1", "boot-b", 3, 99));
  }

  @Test
  void anotherBootTakesTheNodeOverOnceTheHolderIsSilentPastTheWindowAndTheOldOneIsThenRefused() throws Exception {
    assertTrue(await(heartbeat("held-2", "boot-a", 1, 10)));
    refusedAsHeld(heartbeat("held-2", "boot-b", 1, 20));
    silence("held-2", 7);
    assertTrue(await(heartbeat("held-2", "boot-b", 2, 20)), "the holder went silent past the 6 s window");
    assertEquals("boot-b", bootOf("held-2"));
    assertEquals(20.0, await(store.nodes.get("held-2")).orElseThrow().info().cpuPercent());
    NodeHeldException held = refusedAsHeld(heartbeat("held-2", "boot-a", 2, 10));
    assertTrue(held.getMessage().contains("node held-2"), held.getMessage());
  }

  @Test
  void aReleasedNodeIsTakenOverAtOnceAndALateHeartbeatOfTheReleasedBootNeverHoldsItAgain() throws Exception {
    assertTrue(await(heartbeat("held-3", "boot-a", 1, 10)));
    assertTrue(await(store.nodes.release("held-3", "boot-a")));
    assertTrue(await(store.nodes.release("held-3", "boot-a")), "a repeated release answers the same");
    assertTrue(await(heartbeat("held-3", "boot-a", 2, 11)), "a heartbeat in flight at the stop is still applied");
    assertTrue(await(heartbeat("held-3", "boot-b", 1, 20)), "released: the replacement takes over at once");
    assertEquals("boot-b", bootOf("held-3"));
    refusedAsHeld(heartbeat("held-3", "boot-a", 3, 10));
    refusedAsHeld(heartbeat("held-3", "boot-c", 1, 30)); // the new holder's hold is a hold of its own
    assertFalse(await(store.nodes.release("no-such-node", "boot-a")));
  }

  @Test
  void aBatchMixingHeldRefusalsWithAppliedAndStaleHeartbeatsGivesEachItsOwnAnswer() throws Exception {
    for (int i = 0; i < 20; i++) {
      assertTrue(await(heartbeat("mix-" + i, "boot-a", 5, i)));
    }
    Future<Boolean> first = heartbeat("mix-first", "boot-a", 1, 0); // the others queue behind it: one batch
    List<Future<Boolean>> held = new ArrayList<>();
    List<Future<Boolean>> newer = new ArrayList<>();
    List<Future<Boolean>> stale = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      switch (i % 3) {
        case 0 -> held.add(heartbeat("mix-" + i, "boot-b", 1, 100 + i));
        case 1 -> newer.add(heartbeat("mix-" + i, "boot-a", 6, 200 + i));
        default -> stale.add(heartbeat("mix-" + i, "boot-a", 5, 300 + i));
      }
    }
    Future<Boolean> fresh = heartbeat("mix-new", "boot-b", 1, 1);
    assertTrue(await(first));
    for (Future<Boolean> answer : held) {
      refusedAsHeld(answer);
    }
    for (Future<Boolean> answer : newer) {
      assertTrue(await(answer), "a newer heartbeat of the holder is applied beside the refused ones");
    }
    for (Future<Boolean> answer : stale) {
      assertFalse(await(answer), "a repeated heartbeat of the holder is not newer: not applied, not refused");
    }
    assertTrue(await(fresh), "a node nobody holds yet");
    for (int i = 0; i < 20; i++) {
      double expected = i % 3 == 1 ? 200 + i : i;
      assertEquals(expected, await(store.nodes.get("mix-" + i)).orElseThrow().info().cpuPercent(), "mix-" + i);
      assertEquals("boot-a", bootOf("mix-" + i));
    }
  }
}
