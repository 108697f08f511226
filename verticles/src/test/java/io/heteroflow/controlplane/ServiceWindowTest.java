package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.MutableClock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Schedule windows end to end (SPEC §9): the service beats read a clock the test sets, so it crosses window
 * edges without waiting; the window checker runs every 300 ms. Replicas use no cards (the pool is two plain nodes).
 */
class ServiceWindowTest {
  static final String ADMIN = ControlPlaneHarness.ADMIN;
  static final Duration WAIT = Duration.ofSeconds(60);
  /** Monday 2026-12-07 10:00 in Berlin (CET, UTC+1). */
  static final Instant MONDAY_10 = Instant.parse("2026-12-07T09:00:00Z");
  static final MutableClock CLOCK = new MutableClock(MONDAY_10);
  static final String OFFICE_HOURS = "{\"timezone\":\"Europe/Berlin\",\"open\":[{\"days\":[\"mon\",\"tue\",\"wed\","
      + "\"thu\",\"fri\"],\"from\":\"08:00\",\"to\":\"20:00\"}],";

  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness()
      .services(new ControlPlane.ServiceBeats(500, 300, 500, 1500, 3), CLOCK)
      .agents(List.of(ServiceEndToEndTest.node("win-1", "win", 0), ServiceEndToEndTest.node("win-2", "win", 0)));

  @BeforeAll
  static void agentsRegistered() throws Exception {
    eventually(WAIT, "two agents registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 2);
  }

  static JsonObject service(String token, String name, int replicas, String windows) throws Exception {
    return cp.json("POST", "/api/v1/groups", token, "{\"name\":\"" + name + "\",\"type\":\"inference\",\"replicas\":"
        + replicas + ",\"template\":{\"command\":[\"sleep\",\"600\"],\"node_selector\":{\"pool\":\"win\"}},"
        + "\"windows\":" + windows + "}", 201);
  }

  static JsonObject await(String id, String what, Predicate<JsonObject> condition) throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(WAIT, id + " " + what, () -> condition.test(last[0] = cp.get("/api/v1/groups/" + id)));
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
    }
    return last[0];
  }

  static int desired(JsonObject view) {
    return view.getJsonObject("replicas").getInteger("desired");
  }

  static int running(JsonObject view) {
    return view.getJsonObject("replicas").getInteger("running");
  }

  static List<String> eventKinds(String id) {
    JsonArray items = cp.get("/api/v1/groups/" + id + "/events").getJsonArray("items");
    return items.stream().map(each -> ((JsonObject) each).getString("kind")).toList();
  }

  @Test
  void pauseAndRestoreAcrossAWindowEdgeWithAFailoverInBetween() throws Exception {
    CLOCK.set(MONDAY_10);
    String id = service(ADMIN, "office", 2, OFFICE_HOURS + "\"action\":\"pause\"}").getString("id");
    JsonObject open = await(id, "2 running in an open window", view -> running(view) == 2);
    assertEquals("open", open.getJsonObject("window").getString("state"));
    assertEquals("2026-12-07T19:00:00Z", open.getJsonObject("window").getString("next_edge_at"), "closes 20:00 CET");
    assertFalse(open.getJsonObject("window").getBoolean("owns_replicas"));

    CLOCK.set(Instant.parse("2026-12-07T19:30:00Z"));
    JsonObject paused = await(id, "paused by the closed window", view -> "Paused".equals(view.getString("status"))
        && running(view) == 0);
    assertEquals(0, desired(paused));
    assertTrue(paused.getJsonObject("window").getBoolean("owns_replicas"));
    assertEquals(2, paused.getJsonObject("window").getInteger("replicas_before_window"));
    assertEquals("2026-12-08T07:00:00Z", paused.getJsonObject("window").getString("next_edge_at"), "opens 08:00 CET");
    assertEquals("window_owns_replicas", cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN,
        "{\"replicas\":1}", 409).getString("code"));

    cp.failover();
    eventually(WAIT, "the new control plane sees the agents", () -> cp.get("/api/v1/nodes").getJsonArray("items")
        .stream().filter(node -> "online".equals(((JsonObject) node).getString("status"))).count() == 2);
    Thread.sleep(1000);
    JsonObject stillPaused = cp.get("/api/v1/groups/" + id);
    assertEquals("Paused", stillPaused.getString("status"), "the new leader keeps the window's action");
    assertEquals(2, stillPaused.getJsonObject("window").getInteger("replicas_before_window"));

    CLOCK.set(Instant.parse("2026-12-08T07:30:00Z"));
    JsonObject restored = await(id, "restored to 2 by the new leader", view -> running(view) == 2);
    assertEquals(2, desired(restored));
    assertFalse(restored.getJsonObject("window").getBoolean("owns_replicas"));
    assertEquals("Running", restored.getString("status"));
    assertEquals(List.of("window", "window", "created"), eventKinds(id));
    cp.json("PUT", "/api/v1/groups/" + id + "/replicas", ADMIN, "{\"replicas\":1}", 200);
  }

  @Test
  void anInactiveTenantGetsNoWindowScaleUpButItsPauseStillApplies() throws Exception {
    CLOCK.set(MONDAY_10);
    String token = cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"dormant\"}", 201).getString("token");
    String grow = service(token, "grow", 1, OFFICE_HOURS + "\"action\":\"scale\",\"scale_to\":2}").getString("id");
    String rest = service(token, "rest", 1, OFFICE_HOURS + "\"action\":\"pause\"}").getString("id");
    await(grow, "running", view -> running(view) == 1);
    await(rest, "running", view -> running(view) == 1);

    cp.json("PUT", "/api/v1/tenants/dormant", ADMIN, "{\"active\":false}", 200);
    assertEquals("tenant_inactive", cp.json("POST", "/api/v1/tasks", token, "{\"name\":\"t\",\"command\":[\"true\"]}",
        403).getString("code"));
    assertEquals("tenant_inactive", cp.json("PUT", "/api/v1/groups/" + grow + "/replicas", token,
        "{\"replicas\":2}", 403).getString("code"));
    CLOCK.set(Instant.parse("2026-12-12T12:00:00Z")); // Saturday: both windows closed
    await(rest, "paused although its tenant is inactive", view -> "Paused".equals(view.getString("status")));
    eventually(WAIT, "the scale-up recorded as skipped", () -> eventKinds(grow).contains("window-skipped"));
    JsonObject skipped = cp.get("/api/v1/groups/" + grow);
    assertEquals(1, desired(skipped), "a window action that adds replicas waits while the tenant is inactive");
    assertFalse(skipped.getJsonObject("window").getBoolean("owns_replicas"));

    cp.json("PUT", "/api/v1/tenants/dormant", ADMIN, "{\"active\":true}", 200);
    JsonObject grown = await(grow, "scaled to 2 once active", view -> desired(view) == 2 && running(view) == 2);
    assertTrue(grown.getJsonObject("window").getBoolean("owns_replicas"));
  }

  @Test
  void aServiceCreatedOutsideItsWindowWaitsForIt() throws Exception {
    CLOCK.set(Instant.parse("2026-12-12T12:00:00Z")); // Saturday
    JsonObject created = service(ADMIN, "weekday-only", 2, OFFICE_HOURS + "\"action\":\"stop\"}");
    assertEquals("Paused", created.getString("status"), "no replica starts outside the window");
    assertEquals(0, desired(created));
    assertTrue(created.getJsonObject("window").getBoolean("owns_replicas"));
    assertEquals(0, created.getJsonArray("slots").size());
    CLOCK.set(Instant.parse("2026-12-14T09:00:00Z")); // Monday 10:00 in Berlin
    JsonObject open = await(created.getString("id"), "2 running once the window opens", view -> running(view) == 2);
    assertFalse(open.getJsonObject("window").getBoolean("owns_replicas"));
  }

  @Test
  void stopEndsTheServiceForGood() throws Exception {
    CLOCK.set(MONDAY_10);
    String id = service(ADMIN, "night-off", 1, OFFICE_HOURS + "\"action\":\"stop\"}").getString("id");
    await(id, "running", view -> running(view) == 1);
    CLOCK.set(Instant.parse("2026-12-07T21:00:00Z"));
    JsonObject stopped = await(id, "stopped", view -> "Stopped".equals(view.getString("status")));
    CLOCK.set(Instant.parse("2026-12-08T09:00:00Z"));
    Thread.sleep(1500);
    JsonObject later = cp.get("/api/v1/groups/" + id);
    assertEquals("Stopped", later.getString("status"), "stop does not restore");
    eventually(WAIT, "its replica stopped", () -> "stopped".equals(ServiceEndToEndTest.slot(
        cp.get("/api/v1/groups/" + id), 0).getString("status")));
    assertEquals(stopped.getString("id"), later.getString("id"));
  }
}
