package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A tenant sees and stops only its own tasks; everything else is a 404, and admin routes are refused. */
class TenantIsolationTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static String alice;
  private static String bob;

  @BeforeAll
  static void start() throws Exception {
    alice = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
  }

  @Test
  void tenantsSeeOnlyTheirOwnTasks() throws Exception {
    JsonObject task = cp.json("POST", "/api/v1/tasks", alice, "{\"name\":\"secret\",\"command\":[\"true\"],"
        + "\"gpu_required\":64}", 201);
    String id = task.getString("id");
    assertEquals("alice", task.getString("tenant"));

    assertEquals(200, cp.call("GET", "/api/v1/tasks/" + id, alice, null).statusCode());
    assertEquals(404, cp.call("GET", "/api/v1/tasks/" + id, bob, null).statusCode());
    assertEquals(404, cp.call("GET", "/api/v1/tasks/" + id + "/logs", bob, null).statusCode());
    assertEquals(404, cp.call("GET", "/api/v1/tasks/" + id + "/events", bob, null).statusCode());
    assertEquals(404, cp.call("POST", "/api/v1/tasks/" + id + "/stop", bob, null).statusCode());
    assertEquals("pending", cp.json("GET", "/api/v1/tasks/" + id, alice, null, 200).getString("status"),
        "bob's stop changed nothing");
    assertEquals(0, cp.json("GET", "/api/v1/tasks", bob, null, 200).getInteger("count"));
    assertEquals(1, cp.json("GET", "/api/v1/tasks", alice, null, 200).getInteger("count"));
    assertEquals(200, cp.call("GET", "/api/v1/tasks/" + id, ControlPlaneHarness.ADMIN, null).statusCode());

    assertEquals("stopped", cp.json("POST", "/api/v1/tasks/" + id + "/stop", alice, null, 202).getString("status"));
  }

  @Test
  void tenantsCannotUseAdminRoutes() throws Exception {
    assertEquals(403, cp.call("POST", "/api/v1/tenants", alice, "{\"name\":\"mallory\"}").statusCode());
    assertEquals(403, cp.call("POST", "/api/v1/share-groups", alice, "{\"name\":\"g\",\"tenants\":[\"alice\"]}")
        .statusCode());
    assertEquals(403, cp.call("PUT", "/api/v1/nodes/n1/location", alice, "{\"rack\":\"r1\"}").statusCode());
  }

  @Test
  void tenantNamesAreUniqueAndTokensDiffer() throws Exception {
    assertNotEquals(alice, bob);
    JsonObject error = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"alice\"}", 409);
    assertEquals("name", error.getString("field"));
    JsonObject group = cp.json("POST", "/api/v1/share-groups", ControlPlaneHarness.ADMIN,
        "{\"name\":\"research\",\"tenants\":[\"alice\",\"bob\"]}", 201);
    assertTrue(group.getJsonArray("tenants").contains("bob"));
    cp.json("POST", "/api/v1/share-groups", ControlPlaneHarness.ADMIN,
        "{\"name\":\"research\",\"tenants\":[\"alice\"]}", 409);
  }
}
