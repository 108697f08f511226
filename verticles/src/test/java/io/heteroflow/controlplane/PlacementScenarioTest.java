package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.ADMIN;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Placement scenarios through the API on real PostgreSQL with simulated agents: vendor strictness, nvlink,
 * rdma, binpack vs spread, and plugin switches that take effect on the next placement.
 */
class PlacementScenarioTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      node("pcie-1", GpuVendor.NVIDIA, "L40S", 4, List.of(), Map.of("rdma", "false")),
      node("pairs-1", GpuVendor.NVIDIA, "A100", 4, List.of(List.of(0, 1), List.of(2, 3)),
          Map.of("rdma", "true", "rdma-speed", "200")),
      node("mixed-1", GpuVendor.NVIDIA, "H100", 8, List.of(List.of(0, 1), List.of(2, 3, 4, 5, 6, 7)),
          Map.of("pool", "mixed")),
      node("asc-1", GpuVendor.ASCEND, "910B", 8, List.of(), Map.of())));

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "four nodes", () -> cp.get("/api/v1/nodes").getInteger("count") == 4);
  }

  private static SimulatedNode node(String id, GpuVendor vendor, String model, int cards, List<List<Integer>> nvlink,
                                    Map<String, String> labels) {
    List<Integer> numa = new java.util.ArrayList<>();
    for (int i = 0; i < cards; i++) {
      numa.add(i < cards / 2 ? 0 : 1);
    }
    return new SimulatedNode(id, vendor, model, cards, 32768, 16, 128, 5, 4096, nvlink, numa, labels, Map.of(),
        List.of("127.0.0.1"), null);
  }

  @AfterEach
  void defaults() throws Exception {
    cp.json("POST", "/api/v1/plugins/spread?action=enable", ADMIN, null, 200);
    for (String plugin : List.of("nvlink", "topology", "rdma")) {
      cp.json("POST", "/api/v1/plugins/" + plugin + "?action=enable", ADMIN, null, 200);
    }
  }

  @Test
  void gpuTypeIsStrictAndCaseInsensitive() throws Exception {
    JsonObject upper = cp.run("{\"name\":\"up\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_type\":\"NVIDIA\"}");
    assertTrue(List.of("pcie-1", "pairs-1", "mixed-1").contains(upper.getString("node")), upper.encode());
    assertEquals("nvidia", upper.getString("gpu_type"));
    assertEquals("asc-1", cp.run("{\"name\":\"npu\",\"command\":[\"true\"],\"gpu_required\":8,\"gpu_type\":\"ascend\"}")
        .getString("node"));
    String id = cp.submit("{\"name\":\"none\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_type\":\"musa\"}");
    JsonObject waiting = cp.awaitReason(id, "GPUTypeUnavailable");
    assertEquals("0/4 nodes are available: 4 not musa.", waiting.getJsonObject("reason").getString("message"));
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
  }

  @Test
  void nvlinkRequiredSkipsPcieOnlyNodesAndTakesTheSmallestSufficientDomain() throws Exception {
    JsonObject pair = cp.run("{\"name\":\"nv\",\"command\":[\"true\"],\"gpu_required\":2,\"gpu_model\":[\"L40S\",\"A100\"],"
        + "\"labels\":{\"nvlink\":\"required\"}}");
    assertEquals("pairs-1", pair.getString("node"), "the PCIe-only L40S node is filtered");
    assertTrue(List.of(List.of(0, 1), List.of(2, 3)).contains(pair.getJsonArray("gpus").getList()));

    JsonObject small = cp.run("{\"name\":\"dom\",\"command\":[\"true\"],\"gpu_required\":2,"
        + "\"node_selector\":{\"pool\":\"mixed\"}}");
    assertEquals(new JsonArray(List.of(0, 1)), small.getJsonArray("gpus"), "the 2-card domain, not the 6-card one");

    String blocked = cp.submit("{\"name\":\"pcie\",\"command\":[\"true\"],\"gpu_required\":2,\"gpu_model\":[\"L40S\"],"
        + "\"labels\":{\"nvlink\":\"required\"}}");
    assertEquals("0/4 nodes are available: 3 without an allowed gpu_model, 1 without 2 free NVLink-connected cards.",
        cp.awaitReason(blocked, "NVLinkDomainUnavailable").getJsonObject("reason").getString("message"));
    cp.json("POST", "/api/v1/tasks/" + blocked + "/stop", ADMIN, null, 202);
  }

  @Test
  void rdmaRequiredDropsOnlyExplicitFalse() throws Exception {
    JsonObject task = cp.run("{\"name\":\"rdma\",\"command\":[\"true\"],\"gpu_required\":1,"
        + "\"gpu_model\":[\"L40S\",\"A100\"],\"labels\":{\"rdma\":\"required\"}}");
    assertEquals("pairs-1", task.getString("node"));
    String refused = cp.submit("{\"name\":\"rdma2\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_model\":[\"L40S\"],"
        + "\"labels\":{\"rdma\":\"required\"}}");
    cp.awaitReason(refused, "RDMAUnavailable");
    cp.json("POST", "/api/v1/tasks/" + refused + "/stop", ADMIN, null, 202);
  }

  @Test
  void binpackAndSpreadSwitchAndTheNextPlacementFollows() throws Exception {
    for (String plugin : List.of("nvlink", "topology", "rdma")) {
      cp.json("POST", "/api/v1/plugins/" + plugin + "?action=disable", ADMIN, null, 200);
    }
    String anchor = cp.submit("{\"name\":\"anchor\",\"command\":[\"sleep\",\"60\"],\"gpu_required\":1,"
        + "\"gpu_model\":[\"L40S\"]}");
    cp.awaitStatus(anchor, "running");
    String probe = "{\"name\":\"probe\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_model\":[\"L40S\",\"A100\"]}";
    assertEquals("pairs-1", cp.run(probe).getString("node"), "spread: the emptier node");

    JsonObject plugins = cp.json("POST", "/api/v1/plugins/binpack?action=enable", ADMIN, null, 200);
    assertTrue(state(plugins, "binpack").getBoolean("enabled"));
    assertFalse(state(plugins, "spread").getBoolean("enabled"), "enabling binpack disables spread");
    assertEquals(1, state(plugins, "binpack").getInteger("weight"), "a zero weight becomes 1 when switched on");
    assertEquals(plugins, cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200));
    assertEquals("pcie-1", cp.run(probe).getString("node"), "binpack: the fuller node");

    plugins = cp.json("POST", "/api/v1/plugins/spread?action=enable", ADMIN, null, 200);
    assertFalse(state(plugins, "binpack").getBoolean("enabled"));
    assertEquals("pairs-1", cp.run(probe).getString("node"));
    cp.json("POST", "/api/v1/tasks/" + anchor + "/stop", ADMIN, null, 202);
    cp.awaitStatus(anchor, "stopped");
  }

  @Test
  void correctnessFiltersRefuseToBeSwitchedOffAndWeightsPersist() throws Exception {
    JsonObject refused = cp.json("POST", "/api/v1/plugins/gpu-filter?action=disable", ADMIN, null, 409);
    assertEquals("plugin_locked", refused.getString("code"));
    cp.json("PUT", "/api/v1/plugins/resource-filter", ADMIN, "{\"weight\":3}", 409);
    JsonObject plugins = cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200);
    assertTrue(state(plugins, "gpu-filter").getBoolean("enabled") && state(plugins, "gpu-filter").getBoolean("locked"));
    assertTrue(state(plugins, "resource-filter").getBoolean("enabled"));

    assertEquals(7, state(cp.json("PUT", "/api/v1/plugins/topology", ADMIN, "{\"weight\":7}", 200), "topology")
        .getInteger("weight"));
    assertEquals(7, state(cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200), "topology").getInteger("weight"));
    cp.json("PUT", "/api/v1/plugins/topology", ADMIN, "{\"weight\":1}", 200);

    JsonObject stage = cp.json("PUT", "/api/v1/plugins/preempt", ADMIN, "{\"preempt_stage\":\"scheduled\"}", 200);
    assertEquals("scheduled", state(stage, "preempt").getJsonObject("extra").getString("preempt_stage"));
    assertEquals("preempt_stage", cp.json("PUT", "/api/v1/plugins/preempt", ADMIN, "{\"preempt_stage\":\"always\"}", 400)
        .getString("field"));
    assertEquals("preempt_stage", cp.json("PUT", "/api/v1/plugins/spread", ADMIN, "{\"preempt_stage\":\"running\"}", 400)
        .getString("field"));
    assertEquals("weight", cp.json("PUT", "/api/v1/plugins/spread", ADMIN, "{\"weight\":101}", 400).getString("field"));
    assertEquals("action", cp.json("POST", "/api/v1/plugins/spread?action=toggle", ADMIN, null, 400).getString("field"));
    cp.json("POST", "/api/v1/plugins/teleport?action=enable", ADMIN, null, 404);
    cp.json("PUT", "/api/v1/plugins/preempt", ADMIN, "{\"preempt_stage\":\"running\"}", 200);
  }

  private static JsonObject state(JsonObject plugins, String name) {
    return plugins.getJsonArray("plugins").stream().map(JsonObject.class::cast)
        .filter(plugin -> plugin.getString("name").equals(name)).findFirst().orElseThrow();
  }
}
