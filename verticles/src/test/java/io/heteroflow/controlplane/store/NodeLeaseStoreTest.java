package io.heteroflow.controlplane.store;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.message.Beat;
import io.heteroflow.protocol.message.Heartbeat;
import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Liveness-only beats (V19 node_leases): they keep a node alive without rewriting its row, only for its holder and
 * only while it is online; and the offline sweep gives the agents of a control plane that is gone time to reconnect.
 */
class NodeLeaseStoreTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static Future<Boolean> heartbeat(NodeStore nodes, String node, String boot, long seq) {
    return nodes.applyHeartbeat(Heartbeat.fromJson(new JsonObject().put("node_id", node).put("boot_id", boot)
        .put("seq", seq).put("gpu_vendor", "nvidia").put("cpu_cores", 8).put("memory_total_gb", 64.0)
        .put("cards", new JsonArray().add(new JsonObject().put("index", 0).put("memory_total_mb", 1000)))
        .put("active_tasks", new JsonArray())));
  }

  private static Future<Boolean> beat(NodeStore nodes, String node, String boot, long seq) {
    return nodes.beat(new Beat(node, boot, seq, List.of())).map(NodeStore.HeartbeatOutcome::applied);
  }

  /** The node's row version as PostgreSQL sees it: its creating transaction and its version column. */
  private static String rowVersion(String node) throws Exception {
    Row row = store.query("SELECT xmin::text AS x, version FROM nodes WHERE id = $1", node).iterator().next();
    return row.getString("x") + "/" + row.getLong("version");
  }

  /** The node's last full heartbeat and its lease renewal, {@code seconds} ago. */
  private static void silence(String node, int seconds) throws Exception {
    store.query("UPDATE nodes SET last_heartbeat_at = now() - make_interval(secs => $2) WHERE id = $1", node,
        (double) seconds);
    store.query("UPDATE node_leases SET renewed_at = now() - make_interval(secs => $2) WHERE node_id = $1", node,
        (double) seconds);
  }

  @Test
  void aBeatKeepsItsNodeAliveAndHeldWithoutRewritingTheNodeRow() throws Exception {
    assertTrue(await(heartbeat(store.nodes, "lease-1", "boot-a", 1)));
    assertTrue(await(heartbeat(store.nodes, "lease-2", "boot-a", 1)));
    silence("lease-1", 3600);
    silence("lease-2", 3600);
    String before = rowVersion("lease-1");
    assertTrue(await(beat(store.nodes, "lease-1", "boot-a", 2)), "the holder's beat is applied");
    assertEquals(before, rowVersion("lease-1"), "the node row is not rewritten (the scheduler rereads none)");
    OffsetDateTime seen = await(store.nodes.get("lease-1")).orElseThrow().lastHeartbeatAt();
    assertTrue(Duration.between(seen.toInstant(), java.time.Instant.now()).abs().getSeconds() < 60,
        "last_heartbeat_at is the beat's: " + seen);

    NodeStore.Sweep sweep = await(store.nodes.markSilentNodesOffline(15));
    assertEquals(List.of("lease-2"), sweep.markedOffline(), "only the node without a beat");
    assertEquals("online", await(store.nodes.get("lease-1")).orElseThrow().info().status());

    Future<Boolean> other = heartbeat(store.nodes, "lease-1", "boot-b", 1);
    await(other.otherwiseEmpty());
    assertTrue(other.cause() instanceof NodeHeldException, "the beat keeps the node held: " + other.cause());
  }

  @Test
  void aBeatOfAnotherBootAnOlderOneOrForAnOfflineOrUnknownNodeIsNotApplied() throws Exception {
    assertTrue(await(heartbeat(store.nodes, "lease-3", "boot-a", 1)));
    assertFalse(await(beat(store.nodes, "lease-3", "boot-b", 2)), "another boot");
    assertTrue(await(beat(store.nodes, "lease-3", "boot-a", 5)));
    assertFalse(await(beat(store.nodes, "lease-3", "boot-a", 5)), "not newer");
    assertFalse(await(beat(store.nodes, "lease-3", "boot-a", 4)), "older");
    assertFalse(await(beat(store.nodes, "no-such-node", "boot-a", 1)), "unknown node");
    store.query("UPDATE nodes SET status = 'offline' WHERE id = 'lease-3'");
    assertFalse(await(beat(store.nodes, "lease-3", "boot-a", 6)), "an offline node comes back by a full heartbeat");
    assertEquals("offline", await(store.nodes.get("lease-3")).orElseThrow().info().status());
    assertTrue(await(heartbeat(store.nodes, "lease-3", "boot-a", 7)));
    assertEquals("online", await(store.nodes.get("lease-3")).orElseThrow().info().status());
    assertTrue(await(beat(store.nodes, "lease-3", "boot-a", 8)));
  }

  @Test
  void aSilentNodeWhoseControlPlaneIsGoneGetsTimeToReconnect() throws Exception {
    store.query("INSERT INTO control_planes (member_id, host, http_port, last_seen) VALUES"
        + " ('cp-gone', 'h1', 1, now() - interval '20 seconds'), ('cp-live', 'h2', 2, now())");
    NodeStore viaGone = new NodeStore(store.pool, "cp-gone");
    NodeStore viaLive = new NodeStore(store.pool, "cp-live");
    assertTrue(await(heartbeat(viaGone, "orphan-1", "b", 1)));
    assertTrue(await(beat(viaGone, "orphan-1", "b", 2)), "its last sign a beat through the dead control plane");
    assertTrue(await(heartbeat(viaGone, "orphan-2", "b", 1)), "its last sign a full heartbeat through it");
    assertTrue(await(heartbeat(viaLive, "kept-1", "b", 1)));
    assertTrue(await(beat(viaLive, "kept-1", "b", 2)));
    assertTrue(await(heartbeat(viaLive, "fresh-1", "b", 1)), "one node heard from (not every node silent)");
    for (String node : List.of("orphan-1", "orphan-2", "kept-1")) {
      silence(node, 20);
    }
    NodeStore.Sweep sweep = await(store.nodes.markSilentNodesOffline(15));
    assertTrue(sweep.markedOffline().contains("kept-1"), "silent through a live control plane: " + sweep);
    assertFalse(sweep.markedOffline().contains("orphan-1"), "reconnecting: " + sweep);
    assertFalse(sweep.markedOffline().contains("orphan-2"), "reconnecting: " + sweep);

    silence("orphan-1", 15 + NodeStore.RECONNECT_GRACE_SECONDS + 1);
    assertTrue(await(store.nodes.markSilentNodesOffline(15)).markedOffline().contains("orphan-1"),
        "not back within the reconnect grace: offline");
    assertTrue(await(beat(viaLive, "orphan-2", "b", 3)), "reconnected through the survivor");
    silence("orphan-2", 20);
    assertTrue(await(store.nodes.markSilentNodesOffline(15)).markedOffline().contains("orphan-2"),
        "its last sign through a live control plane: the normal grace");
  }
}
