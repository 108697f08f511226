package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.ADMIN;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fractional shards across tenants through the API (SPEC §3, §5), declared CPU accounting, inference host ports,
 * and the heartbeat ledger correcting drift — on real PostgreSQL with a simulated agent running real processes.
 */
class ShardScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().ledgerCheckMs(300).agents(List.of(
      new SimulatedNode("shared-1", GpuVendor.NVIDIA, "A10", 2, 32768, 16, 128, 5, 4096, List.of(), List.of(),
          Map.of(), Map.of(), List.of("127.0.0.1"), null)));
  private static final Map<String, String> TOKENS = new java.util.HashMap<>();

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "the node", () -> cp.get("/api/v1/nodes").getInteger("count") == 1);
    for (String tenant : List.of("alice", "bob", "carol", "dave")) {
      TOKENS.put(tenant, cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"" + tenant + "\"}", 201)
          .getString("token"));
    }
    cp.json("POST", "/api/v1/share-groups", ADMIN, "{\"name\":\"lab\",\"tenants\":[\"alice\",\"bob\"]}", 201);
    cp.json("POST", "/api/v1/share-groups", ADMIN, "{\"name\":\"ops\",\"tenants\":[\"bob\",\"carol\"]}", 201);
  }

  private static String shard(String tenant, long memoryMb) throws Exception {
    return cp.json("POST", "/api/v1/tasks", TOKENS.get(tenant), "{\"name\":\"" + tenant + "\",\"command\":[\"sh\",\"-c\","
        + "\"echo $CUDA_VISIBLE_DEVICES $CUDA_MPS_PINNED_DEVICE_MEM_LIMIT $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE;"
        + " exec sleep 60\"],\"gpu_memory_mb\":" + memoryMb + "}", 201).getString("id");
  }

  @Test
  void shardsStackWithinShareGroupsOnlyAndAreReleasedAtTheEnd() throws Exception {
    List<String> started = new ArrayList<>();
    String alice = shard("alice", 10000);
    started.add(alice);
    JsonObject aliceView = cp.awaitStatus(alice, "running");
    JsonObject aliceShard = aliceView.getJsonObject("shard");
    int aliceCard = aliceShard.getInteger("card_index");
    assertEquals("mps", aliceShard.getString("qos"));
    assertEquals(31, aliceShard.getInteger("compute_percent"));
    eventually(WAIT, "the shard's limits in its environment", () -> logs(alice)
        .equals(aliceCard + " 0=10000M 31\n"));

    String bob = shard("bob", 10000);
    started.add(bob);
    assertEquals(aliceCard, cp.awaitStatus(bob, "running").getJsonObject("shard").getInteger("card_index"),
        "bob shares 'lab' with alice: stacked on her card");

    String carol = shard("carol", 10000);
    started.add(carol);
    int carolCard = cp.awaitStatus(carol, "running").getJsonObject("shard").getInteger("card_index");
    assertNotEquals(aliceCard, carolCard, "carol shares with bob but not with alice: never transitive");

    String dave = shard("dave", 5000);
    started.add(dave);
    JsonObject refused = cp.awaitReason(dave, "NoTenantEligibleGPU");
    assertEquals("pending", refused.getString("status"));
    assertEquals("0/1 nodes are available: 1 with room only on other tenants' cards.",
        refused.getJsonObject("reason").getString("message"));

    JsonObject node = cp.get("/api/v1/nodes/shared-1");
    JsonObject card = node.getJsonArray("cards").getJsonObject(aliceCard);
    assertEquals("shard", card.getString("state"));
    assertEquals(20000, card.getLong("shard_memory_mb"));
    assertEquals(0, node.getInteger("gpu_used"), "shards take no whole cards");

    for (String id : started) {
      cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
    }
    for (String id : started) {
      cp.awaitStatus(id, "stopped");
    }
    eventually(WAIT, "shards released", () -> cp.get("/api/v1/nodes/shared-1").getJsonArray("cards").stream()
        .map(JsonObject.class::cast).allMatch(c -> c.getInteger("shards") == 0));
  }

  @Test
  void declaredCpuIsAccountedAndInferenceGetsAHostPort() throws Exception {
    String tooBig = cp.submit("{\"name\":\"cpu\",\"command\":[\"true\"],\"cpu_cores\":17}");
    assertEquals("0/1 nodes are available: 1 short of CPU cores.",
        cp.awaitReason(tooBig, "InsufficientResources").getJsonObject("reason").getString("message"));
    cp.json("POST", "/api/v1/tasks/" + tooBig + "/stop", ADMIN, null, 202);

    String server = cp.submit("{\"name\":\"svc\",\"type\":\"inference\",\"command\":[\"sh\",\"-c\","
        + "\"echo $PORT; exec sleep 60\"],\"cpu_cores\":12,\"memory_mb\":2048}");
    JsonObject running = cp.awaitStatus(server, "running");
    assertEquals(8000, running.getInteger("host_port"));
    eventually(WAIT, "the port in the environment", () -> logs(server).equals("8000\n"));
    JsonObject node = cp.get("/api/v1/nodes/shared-1");
    assertEquals(12.0, node.getDouble("cpu_allocated"));
    assertEquals(2048, node.getLong("memory_allocated_mb"));

    String second = cp.submit("{\"name\":\"cpu2\",\"command\":[\"true\"],\"cpu_cores\":8}");
    cp.awaitReason(second, "InsufficientResources");
    cp.json("POST", "/api/v1/tasks/" + server + "/stop", ADMIN, null, 202);
    cp.awaitStatus(second, "succeeded");
    eventually(WAIT, "CPU returned", () -> cp.get("/api/v1/nodes/shared-1").getDouble("cpu_allocated") == 0.0);
  }

  @Test
  void theHeartbeatLedgerCorrectsDrift() throws Exception {
    ControlPlaneHarness.await(cp.pool().query("UPDATE nodes SET gpu_used = 2 WHERE id = 'shared-1'").execute());
    eventually(WAIT, "the drift corrected", () -> cp.get("/api/v1/nodes/shared-1").getInteger("gpu_used") == 0);
    String metrics = cp.call("GET", "/metrics", null, null).body();
    Matcher counted = Pattern.compile("(?m)^heteroflow_ledger_discrepancies_total (\\S+)$").matcher(metrics);
    assertTrue(counted.find());
    assertTrue(Double.parseDouble(counted.group(1)) >= 1);
  }

  private static String logs(String id) {
    try {
      return cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
