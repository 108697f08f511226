package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.message.Heartbeat;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.StoreFixture;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Node administration in PostgreSQL: a cordon bumps the node's version and is refused by both binds under the
 * node's row lock; a drain shows while tasks remain; an admin's dedicated tenant is never undone by a heartbeat.
 */
class NodeAdminStoreTest {
  @RegisterExtension
  static final StoreFixture store = new StoreFixture(4);

  private static JsonObject beat(String node, long seq, String dedicated) {
    return new JsonObject().put("node_id", node).put("boot_id", "b1").put("seq", seq).put("gpu_vendor", "nvidia")
        .put("cpu_cores", 8).put("cpu_percent", 1.0).put("memory_total_gb", 64.0).put("memory_used_mb", 1024)
        .put("cards", new JsonArray().add(new JsonObject().put("index", 0).put("memory_total_mb", 1000)))
        .put("dedicated_tenant", dedicated);
  }

  private static long version(String node) throws Exception {
    return store.count("SELECT version FROM nodes WHERE id = $1", node);
  }

  private static NodeRecord node(String id) throws Exception {
    return await(store.nodes.get(id)).orElseThrow();
  }

  @Test
  void aCordonBumpsTheVersionAndBothBindsRefuseTheNode() throws Exception {
    store.node("co-1", 4);
    long before = version("co-1");
    assertTrue(await(store.nodes.setCordon("co-1", true, false)));
    assertTrue(version("co-1") > before, "the scheduler's snapshot must see the cordon");
    assertTrue(node("co-1").info().cordoned());
    assertTrue(node("co-1").toJson().getBoolean("cordoned"));
    // a restarted agent (its predecessor silent past the hold window) heartbeats with a new boot id
    store.query("UPDATE nodes SET last_heartbeat_at = now() - interval '1 minute' WHERE id = 'co-1'");
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("co-1", 2, null).put("boot_id", "b2")))));
    assertTrue(node("co-1").info().cordoned(), "a heartbeat never uncordons");

    BindStore.Outcome single = await(store.binds.bind(store.task(1).id(), "co-1", List.of(0)));
    assertFalse(single.bound());
    assertEquals("NoSchedulableNodes", single.code().name());
    assertEquals("node co-1 is cordoned", single.message());
    BindStore.Outcome batched = await(store.batchBinds.bind(List.of(new BindStore.Request(store.task(1).id(), "co-1",
        List.of(1), null)), null)).outcomes().get(0);
    assertFalse(batched.bound());
    assertEquals("node co-1 is cordoned", batched.message());
    assertEquals(0, store.count("SELECT gpu_used FROM nodes WHERE id = 'co-1'"));

    assertTrue(await(store.nodes.setCordon("co-1", false, false)));
    assertFalse(node("co-1").info().cordoned());
    assertTrue(await(store.binds.bind(store.task(1).id(), "co-1", List.of(0))).bound(), "uncordoned: it binds");
    assertFalse(await(store.nodes.setCordon("co-missing", true, false)), "an unknown node is reported");
  }

  @Test
  void aDrainShowsWhileTasksRemainAndTheNodeStaysCordonedAfter() throws Exception {
    store.node("dr-1", 2);
    TaskRecord task = store.task(1);
    assertTrue(await(store.binds.bind(task.id(), "dr-1", List.of(0))).bound());
    assertTrue(await(store.nodes.setCordon("dr-1", true, true)));
    assertTrue(node("dr-1").draining());
    assertEquals(List.of(task.id()), List.copyOf(await(store.nodes.activeTasks("dr-1")).keySet()));

    store.query("UPDATE tasks SET status = 'succeeded' WHERE id = $1", task.id());
    assertFalse(node("dr-1").draining(), "no active task left: drained");
    assertTrue(node("dr-1").info().cordoned(), "a drained node stays cordoned");
    assertTrue(await(store.nodes.setCordon("dr-1", true, false)));
    assertEquals(1, store.count("SELECT count(*) FROM nodes WHERE id = 'dr-1' AND drain_requested"),
        "a plain cordon keeps a drain asked for");
    assertTrue(await(store.nodes.setCordon("dr-1", false, false)));
    assertEquals(0, store.count("SELECT count(*) FROM nodes WHERE id = 'dr-1' AND (drain_requested OR cordoned)"),
        "uncordon ends the drain");
  }

  @Test
  void anAdminsDedicatedTenantIsNeverUndoneByAHeartbeat() throws Exception {
    store.query("INSERT INTO tenants (name) VALUES ('team-x'), ('team-y')");
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("ded-1", 1, "team-x")))));
    assertEquals("team-x", node("ded-1").info().dedicatedTenant());
    assertEquals("agent", node("ded-1").toJson().getString("dedicated_by"));

    assertEquals(NodeStore.DedicatedOutcome.SET, await(store.nodes.setDedicated("ded-1", null)));
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("ded-1", 2, "team-x")))));
    assertNull(node("ded-1").info().dedicatedTenant(), "the admin cleared it; the agent's file does not undo that");
    assertEquals("admin", node("ded-1").toJson().getString("dedicated_by"));

    long before = version("ded-1");
    assertEquals(NodeStore.DedicatedOutcome.SET, await(store.nodes.setDedicated("ded-1", "team-y")));
    assertTrue(version("ded-1") > before);
    assertTrue(await(store.nodes.applyHeartbeat(Heartbeat.fromJson(beat("ded-1", 3, "team-x")))));
    assertEquals("team-y", node("ded-1").info().dedicatedTenant());

    assertEquals(NodeStore.DedicatedOutcome.UNKNOWN_TENANT, await(store.nodes.setDedicated("ded-1", "nobody")));
    assertEquals(NodeStore.DedicatedOutcome.UNKNOWN_NODE, await(store.nodes.setDedicated("ded-missing", "team-y")));
    assertEquals("team-y", node("ded-1").info().dedicatedTenant());
  }
}
