package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/** The API against its OpenAPI document, idempotent submission, and the 409 of an illegal transition. */
class ApiContractTest {
  private static ControlPlaneHarness cp;

  @BeforeAll
  static void start() throws Exception {
    cp = ControlPlaneHarness.start();
  }

  @AfterAll
  static void stop() throws Exception {
    cp.close();
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyRouteIsInTheOpenApiDocument() throws Exception {
    HttpResponse<String> document = cp.call("GET", "/api/v1/openapi.yaml", null, null);
    assertEquals(200, document.statusCode());
    Map<String, Map<String, Object>> paths = (Map<String, Map<String, Object>>)
        ((Map<String, Object>) new Yaml().load(document.body())).get("paths");
    List<String> routes = new ArrayList<>();
    collect(cp.running.api().router(), "", routes);
    assertTrue(routes.size() >= 16, "found the routes: " + routes);
    for (String route : routes) {
      String[] methodAndPath = route.split(" ", 2);
      Map<String, Object> operations = paths.get(methodAndPath[1]);
      assertNotNull(operations, "path " + methodAndPath[1] + " is missing from openapi.yaml");
      assertNotNull(operations.get(methodAndPath[0].toLowerCase(Locale.ROOT)),
          route + " is missing from openapi.yaml");
    }
  }

  /** "METHOD /path/{param}" for every route with a method, descending into sub-routers. */
  private static void collect(Router router, String prefix, List<String> into) {
    for (Route route : router.getRoutes()) {
      String path = route.getPath();
      if (path == null) {
        continue;
      }
      String full = (prefix + path).replaceAll(":([A-Za-z]+)", "{$1}");
      if (route.getSubRouter() != null) {
        collect(route.getSubRouter(), prefix + path.replaceAll("/$", ""), into);
      } else if (route.methods() != null) {
        route.methods().forEach(method -> into.add(method.name() + " " + full));
      }
    }
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

  private static HttpResponse<String> post(String path, String body, String key) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cp.running.httpPort() + path))
        .header("Authorization", "Bearer " + ControlPlaneHarness.ADMIN).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
  }
}
