package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.RouterRoutes;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.yaml.snakeyaml.Yaml;

/** The API against its OpenAPI document, idempotent submission, and the 409 of an illegal transition. */
class ApiContractTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();


  @Test
  void theTerminationGraceIsTheTasksOwnOrTenSeconds() throws Exception {
    String admin = ControlPlaneHarness.ADMIN;
    assertEquals(10, cp.json("POST", "/api/v1/tasks", admin, "{\"name\":\"graceful\",\"command\":[\"true\"]}", 201)
        .getInteger("termination_grace_seconds"));
    assertEquals(600, cp.json("POST", "/api/v1/tasks", admin,
        "{\"name\":\"patient\",\"command\":[\"true\"],\"termination_grace_seconds\":600}", 201)
        .getInteger("termination_grace_seconds"));
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyRouteIsInTheOpenApiDocument() throws Exception {
    HttpResponse<String> document = cp.call("GET", "/api/v1/openapi.yaml", null, null);
    assertEquals(200, document.statusCode());
    Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>)
        ((Map<String, Object>) new Yaml().load(document.body())).get("paths");
    List<String> routes = routes(cp);
    assertTrue(routes.size() >= 16, "found the routes: " + routes);
    for (String route : routes) {
      String[] methodAndPath = route.split(" ", 2);
      Map<String, Object> operations = paths.get(methodAndPath[1]);
      assertNotNull(operations, "path " + methodAndPath[1] + " is missing from openapi.yaml");
      assertNotNull(operations.get(methodAndPath[0].toLowerCase(Locale.ROOT)),
          route + " is missing from openapi.yaml");
    }
  }

  /** "METHOD /path/{param}" for every route the running API registers. */
  static List<String> routes(ControlPlaneHarness cp) {
    return RouterRoutes.of(cp.running.api().router());
  }

  @Test
  void idempotencyKeyMakesRetriesSafe() throws Exception {
    String body = "{\"name\":\"once\",\"command\":[\"true\"],\"gpu_required\":99}";
    HttpResponse<String> first = post("/api/v1/tasks", body, "retry-1");
    HttpResponse<String> retry = post("/api/v1/tasks", body, "retry-1");
    assertEquals(201, first.statusCode());
    assertEquals(200, retry.statusCode());
    assertEquals(new JsonObject(first.body()).getString("id"), new JsonObject(retry.body()).getString("id"));
    HttpResponse<String> other = post("/api/v1/tasks", body.replace("once", "twice"), "retry-1");
    assertEquals(422, other.statusCode());
    assertEquals("Idempotency-Key", new JsonObject(other.body()).getString("field"));
    assertEquals(1, cp.json("GET", "/api/v1/tasks", ControlPlaneHarness.ADMIN, null, 200).getJsonArray("items")
        .stream().filter(task -> ((JsonObject) task).getString("name").equals("once")).count());
  }

  @Test
  void stoppingAStoppedTaskIsAConflictWithItsState() throws Exception {
    String id = cp.json("POST", "/api/v1/tasks", ControlPlaneHarness.ADMIN,
        "{\"name\":\"idle\",\"command\":[\"true\"],\"gpu_required\":99}", 201).getString("id");
    JsonObject stopped = cp.json("POST", "/api/v1/tasks/" + id + "/stop", ControlPlaneHarness.ADMIN, null, 202);
    assertEquals("stopped", stopped.getString("status"));
    JsonObject conflict = cp.json("POST", "/api/v1/tasks/" + id + "/stop", ControlPlaneHarness.ADMIN, null, 409);
    assertEquals("stopped", conflict.getString("current_status"));
    assertEquals(404, cp.call("GET", "/api/v1/tasks/not-a-uuid", ControlPlaneHarness.ADMIN, null).statusCode());
    assertEquals(404, cp.call("GET", "/api/v1/nodes/nowhere", ControlPlaneHarness.ADMIN, null).statusCode());
  }

  @Test
  void healthAndPluginsAnswer() throws Exception {
    assertEquals("UP", cp.json("GET", "/health", null, null, 200).getString("status"));
    JsonObject plugins = cp.json("GET", "/api/v1/scheduler/plugins", ControlPlaneHarness.ADMIN, null, 200);
    Map<String, JsonObject> byName = new java.util.HashMap<>();
    plugins.getJsonArray("plugins").forEach(p -> byName.put(((JsonObject) p).getString("name"), (JsonObject) p));
    assertTrue(byName.get("resource-filter").getBoolean("locked"));
    assertTrue(byName.get("gpu-filter").getBoolean("enabled"));
    assertTrue(byName.get("spread").getBoolean("enabled"));
    assertEquals(false, byName.get("binpack").getBoolean("enabled"));
  }

  @Test
  void stoppingAPendingTaskReplacesItsPendingReason() throws Exception {
    String id = cp.submit("{\"name\":\"waits\",\"command\":[\"true\"],\"gpu_required\":99}");
    String pendingReason = awaitReason(id);
    assertNotEquals("StoppedByUser", pendingReason);
    JsonObject stopped = cp.json("POST", "/api/v1/tasks/" + id + "/stop", ControlPlaneHarness.ADMIN, null, 202);
    assertEquals("stopped", stopped.getString("status"));
    assertEquals("StoppedByUser", stopped.getJsonObject("reason").getString("code"), stopped.encode());
    assertEquals("stopped by user", stopped.getJsonObject("reason").getString("message"));
    JsonObject read = cp.get("/api/v1/tasks/" + id);
    assertEquals("StoppedByUser", read.getJsonObject("reason").getString("code"), "was " + pendingReason);
    JsonArray events = new JsonArray(cp.call("GET", "/api/v1/tasks/" + id + "/events", ControlPlaneHarness.ADMIN,
        null).body());
    JsonObject last = events.getJsonObject(events.size() - 1);
    assertEquals("stopped", last.getString("to"));
    assertEquals("StoppedByUser", last.getString("code"));
  }

  @Test
  void statusFilterTakesAList() throws Exception {
    String tenant = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"lists\"}", 201)
        .getString("token");
    String pending = cp.json("POST", "/api/v1/tasks", tenant,
        "{\"name\":\"p\",\"command\":[\"true\"],\"gpu_required\":99}", 201).getString("id");
    String stopped = cp.json("POST", "/api/v1/tasks", tenant,
        "{\"name\":\"s\",\"command\":[\"true\"],\"gpu_required\":99}", 201).getString("id");
    cp.json("POST", "/api/v1/tasks/" + stopped + "/stop", tenant, null, 202);
    assertEquals(List.of(stopped, pending), ids(tenant, "?status=pending,stopped"));
    assertEquals(List.of(stopped, pending), ids(tenant, "?status=stopped&status=pending"));
    assertEquals(List.of(stopped), ids(tenant, "?status=stopped"));
    assertEquals(List.of(pending), ids(tenant, "?status=pending,running&limit=5"));
    assertEquals(List.of(), ids(tenant, "?status=succeeded,failed"));
    assertEquals(List.of(stopped, pending), ids(tenant, ""));
  }

  @Test
  void validSurrogatePairsAreStoredAsSent() throws Exception {
    String emoji = "\ud83d\ude00";
    String id = cp.submit("{\"name\":\"smile\",\"command\":[\"echo\",\"\\ud83d\\ude00\"],"
        + "\"env\":{\"FACE\":\"" + emoji + "\"},\"gpu_required\":99}");
    JsonObject task = cp.get("/api/v1/tasks/" + id);
    assertEquals(emoji, task.getJsonArray("command").getString(1), task.encode());
    assertEquals(emoji, task.getJsonObject("env").getString("FACE"), task.encode());
  }

  /** Wrong method: 405 JSON with the route's methods in Allow, before authentication (none needed). */
  @Test
  void wrongMethodIs405WithAllow() throws Exception {
    String[][] table = {
        {"DELETE", "/api/v1/tasks", "GET, POST, OPTIONS"},
        {"HEAD", "/api/v1/tasks", "GET, POST, OPTIONS"},
        {"PUT", "/api/v1/tasks/00000000-0000-0000-0000-000000000000", "GET, OPTIONS"},
        {"GET", "/api/v1/tasks/x/stop", "POST, OPTIONS"},
        {"PATCH", "/api/v1/nodes/n1/labels", "PUT, OPTIONS"},
        {"POST", "/api/v1/nodes/n1/location", "PUT, OPTIONS"},
        {"GET", "/api/v1/tenants", "POST, OPTIONS"},
        {"DELETE", "/api/v1/plugins/spread", "POST, PUT, OPTIONS"},
        {"POST", "/api/v1/fragmentation", "GET, OPTIONS"},
        {"POST", "/health", "GET, HEAD, OPTIONS"},
        {"DELETE", "/health/live", "GET, HEAD, OPTIONS"},
        {"PUT", "/health/ready", "GET, HEAD, OPTIONS"},
        {"PUT", "/api/v1/openapi.yaml", "GET, OPTIONS"},
        {"DELETE", "/metrics", "GET, OPTIONS"}};
    for (String[] row : table) {
      for (String token : new String[] {ControlPlaneHarness.ADMIN, null}) {
        String what = row[0] + " " + row[1] + (token == null ? " without a token" : "");
        HttpResponse<String> response = cp.call(row[0], row[1], token, null);
        assertEquals(405, response.statusCode(), what + ": " + response.body());
        assertEquals(row[2], response.headers().firstValue("Allow").orElse(null), what);
        if (!row[0].equals("HEAD")) {
          assertEquals("application/json", response.headers().firstValue("content-type").orElse(null), what);
          assertEquals("method_not_allowed", new JsonObject(response.body()).getString("code"), what);
        }
      }
    }
  }

  /** Every route, also one added later: OPTIONS answers 204 with its methods; no token needed. */
  @Test
  void optionsAnswersAllowOnEveryRoute() throws Exception {
    List<String> routes = routes(cp);
    for (String route : routes) {
      String[] methodAndPath = route.split(" ", 2);
      String path = methodAndPath[1].replaceAll("\\{[A-Za-z]+}", "x");
      HttpResponse<String> response = cp.call("OPTIONS", path, null, null);
      assertEquals(204, response.statusCode(), route + ": " + response.body());
      List<String> allow = List.of(response.headers().firstValue("Allow").orElse("").split(", "));
      assertTrue(allow.contains(methodAndPath[0]) && allow.contains("OPTIONS"), route + " Allow " + allow);
    }
  }

  @Test
  void unknownApiPathsAre404Json() throws Exception {
    String[][] table = {{"GET", "/api/v1/nope"}, {"POST", "/api/v1/tasks/x/y/z"}, {"GET", "/api/v1/"},
        {"GET", "/api/v1"}, {"HEAD", "/api/v1/nodes/n1/x"}, {"OPTIONS", "/api/v1/nothing"}};
    for (String[] row : table) {
      for (String token : new String[] {ControlPlaneHarness.ADMIN, null}) {
        String what = row[0] + " " + row[1] + (token == null ? " without a token" : "");
        HttpResponse<String> response = cp.call(row[0], row[1], token, null);
        assertEquals(404, response.statusCode(), what + ": " + response.body());
        assertEquals("application/json", response.headers().firstValue("content-type").orElse(null), what);
        if (!row[0].equals("HEAD")) {
          assertEquals("not_found", new JsonObject(response.body()).getString("code"), what);
        }
      }
    }
  }

  private static List<String> ids(String token, String query) throws Exception {
    List<String> ids = new ArrayList<>();
    cp.json("GET", "/api/v1/tasks" + query, token, null, 200).getJsonArray("items")
        .forEach(task -> ids.add(((JsonObject) task).getString("id")));
    return ids;
  }

  private static String awaitReason(String id) throws Exception {
    String[] code = new String[1];
    ControlPlaneHarness.eventually(Duration.ofSeconds(20), "a pending reason for " + id, () -> {
      JsonObject reason = cp.get("/api/v1/tasks/" + id).getJsonObject("reason");
      code[0] = reason == null ? null : reason.getString("code");
      return code[0] != null;
    });
    return code[0];
  }

  private static HttpResponse<String> post(String path, String body, String key) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cp.running.httpPort() + path))
        .header("Authorization", "Bearer " + ControlPlaneHarness.ADMIN).header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
  }
}
