package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Node administration through the API, in one JVM: control plane on real PostgreSQL, simulated agents running
 * real processes. Cordon keeps new tasks off a node, drain stops what runs there (or waits for it), and an
 * admin's dedicated tenant decides who is scheduled there.
 */
class NodeAdminEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final List<String> NODES = List.of("adm-1", "adm-2");
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      ControlPlaneHarness.node("adm-1", GpuVendor.NVIDIA, 2), ControlPlaneHarness.node("adm-2", GpuVendor.NVIDIA, 2)));
  private static String alice;

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "both agents registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 2);
    alice = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
  }

  @AfterEach
  void uncordonAndUndedicate() throws Exception {
    for (String node : NODES) {
      cp.json("POST", "/api/v1/nodes/" + node + "/uncordon", ADMIN, null, 200);
      cp.json("PUT", "/api/v1/nodes/" + node + "/dedicated", ADMIN, "{\"tenant\":null}", 200);
    }
  }

  @Test
  void refusalsNameTheFieldAndTenantsAreForbidden() throws Exception {
    for (String route : List.of("cordon", "uncordon", "drain")) {
      cp.json("POST", "/api/v1/nodes/nope/" + route, ADMIN, null, 404);
      assertEquals(403, cp.call("POST", "/api/v1/nodes/adm-1/" + route, alice, null).statusCode());
    }
    cp.json("PUT", "/api/v1/nodes/nope/dedicated", ADMIN, "{\"tenant\":\"alice\"}", 404);
    assertEquals(403, cp.call("PUT", "/api/v1/nodes/adm-1/dedicated", alice, "{\"tenant\":\"alice\"}").statusCode());
    assertEquals("tenant", cp.json("PUT", "/api/v1/nodes/adm-1/dedicated", ADMIN, "{\"tenant\":\"ghost\"}", 400)
        .getString("field"));
    assertEquals("tenant", cp.json("PUT", "/api/v1/nodes/adm-1/dedicated", ADMIN, "{}", 400).getString("field"));
    assertEquals("tenant", cp.json("PUT", "/api/v1/nodes/adm-1/dedicated", ADMIN, "{\"tenant\":7}", 400)
        .getString("field"));
    assertEquals("wait", cp.json("POST", "/api/v1/nodes/adm-1/drain?wait=soon", ADMIN, null, 400).getString("field"));
    assertFalse(cp.get("/api/v1/nodes/adm-1").getBoolean("cordoned"), "a refused drain cordoned nothing");
    assertEquals(new JsonObject().put("tenant", "alice").put("admin", false),
        cp.json("GET", "/api/v1/whoami", alice, null, 200));
    assertEquals(new JsonObject().put("tenant", "default").put("admin", true),
        cp.json("GET", "/api/v1/whoami", ADMIN, null, 200));
  }

  @Test
  void aTaskNeverLandsOnACordonedNodeAndDoesAfterUncordon() throws Exception {
    for (String node : NODES) {
      assertTrue(cp.json("POST", "/api/v1/nodes/" + node + "/cordon", ADMIN, null, 200).getBoolean("cordoned"));
    }
    String waiting = cp.submit("{\"name\":\"waits\",\"command\":[\"true\"],\"gpu_required\":1}");
    JsonObject pending = cp.awaitReason(waiting, "NoSchedulableNodes");
    assertTrue(pending.getJsonObject("reason").getString("message").contains("2 cordoned"), pending.encode());

    cp.json("POST", "/api/v1/nodes/adm-2/uncordon", ADMIN, null, 200);
    assertEquals("adm-2", cp.awaitStatus(waiting, "succeeded").getString("node"));
    for (int i = 0; i < 4; i++) {
      assertEquals("adm-2", cp.run("{\"name\":\"more\",\"command\":[\"true\"],\"gpu_required\":1}").getString("node"),
          "adm-1 is still cordoned");
    }
    cp.json("POST", "/api/v1/nodes/adm-1/uncordon", ADMIN, null, 200);
    cp.json("POST", "/api/v1/nodes/adm-2/cordon", ADMIN, null, 200);
    assertEquals("adm-1", cp.run("{\"name\":\"back\",\"command\":[\"true\"],\"gpu_required\":1}").getString("node"));
  }

  @Test
  void drainStopsWhatRunsThereOrWithWaitLetsItFinish() throws Exception {
    cp.json("POST", "/api/v1/nodes/adm-2/cordon", ADMIN, null, 200);
    String running = cp.submit("{\"name\":\"long\",\"command\":[\"sh\",\"-c\",\"trap 'echo bye; exit 0' TERM;"
        + " echo ready; while true; do sleep 0.1; done\"],\"gpu_required\":1}");
    cp.awaitStatus(running, "running");
    eventually(WAIT, "the task ready", () -> logs(running).equals("ready\n"));

    JsonObject draining = cp.json("POST", "/api/v1/nodes/adm-1/drain", ADMIN, null, 200);
    assertTrue(draining.getBoolean("cordoned") && draining.getBoolean("draining"), draining.encode());
    JsonObject stopped = cp.awaitStatus(running, "stopped");
    assertEquals(0, stopped.getInteger("exit_code"), "stopped gracefully: the TERM trap ran");
    // SIGTERM reaches the task's whole process group: sh may report its foreground sleep "Terminated"
    String log = logs(running);
    assertTrue(log.matches("ready\n(Terminated\n)?bye\n"), log);
    eventually(WAIT, "drained", () -> !cp.get("/api/v1/nodes/adm-1").getBoolean("draining"));
    assertTrue(cp.get("/api/v1/nodes/adm-1").getBoolean("cordoned"), "a drained node stays cordoned");

    cp.json("POST", "/api/v1/nodes/adm-1/uncordon", ADMIN, null, 200);
    String finishing = cp.submit("{\"name\":\"finishes\",\"command\":[\"sh\",\"-c\",\"sleep 2; echo done\"],"
        + "\"gpu_required\":1}");
    cp.awaitStatus(finishing, "running");
    assertTrue(cp.json("POST", "/api/v1/nodes/adm-1/drain?wait=true", ADMIN, null, 200).getBoolean("draining"));
    assertEquals("running", cp.get("/api/v1/tasks/" + finishing).getString("status"), "wait: left to run");
    assertEquals("done\n", logs(cp.awaitStatus(finishing, "succeeded").getString("id")));
    eventually(WAIT, "drained", () -> !cp.get("/api/v1/nodes/adm-1").getBoolean("draining"));
  }

  @Test
  void anAdminsDedicatedTenantDecidesWhoIsScheduledThere() throws Exception {
    for (String node : NODES) {
      JsonObject view = cp.json("PUT", "/api/v1/nodes/" + node + "/dedicated", ADMIN, "{\"tenant\":\"alice\"}", 200);
      assertEquals("alice", view.getString("dedicated_tenant"));
      assertEquals("admin", view.getString("dedicated_by"));
    }
    String admins = cp.submit("{\"name\":\"not-yours\",\"command\":[\"true\"],\"gpu_required\":1}");
    JsonObject pending = cp.awaitReason(admins, "NoSchedulableNodes");
    assertTrue(pending.getJsonObject("reason").getString("message").contains("2 dedicated to another tenant"),
        pending.encode());
    String alices = cp.json("POST", "/api/v1/tasks", alice, "{\"name\":\"mine\",\"command\":[\"true\"],"
        + "\"gpu_required\":1}", 201).getString("id");
    eventually(WAIT, "alice's task ran", () -> "succeeded".equals(
        new JsonObject(call(alice, "/api/v1/tasks/" + alices)).getString("status")));
    assertEquals("pending", cp.get("/api/v1/tasks/" + admins).getString("status"));

    JsonObject cleared = cp.json("PUT", "/api/v1/nodes/adm-1/dedicated", ADMIN, "{\"tenant\":null}", 200);
    assertNull(cleared.getString("dedicated_tenant"));
    assertEquals("adm-1", cp.awaitStatus(admins, "succeeded").getString("node"));
  }

  private static String logs(String id) {
    return call(ADMIN, "/api/v1/tasks/" + id + "/logs");
  }

  private static String call(String token, String path) {
    try {
      return cp.call("GET", path, token, null).body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
