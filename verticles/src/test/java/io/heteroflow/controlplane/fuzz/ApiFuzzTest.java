package io.heteroflow.controlplane.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.fuzz.ApiCase.Expect;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.RouterRoutes;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 18 §6: generated malformed and hostile requests against every REST route the API registers (wrong
 * types, nulls, extremes, deep nesting, huge strings, invalid UTF-8, duplicate keys, traversal and injection,
 * wrong methods, content types and tokens). Each must be answered within 15 s, never with a 5xx or a stack
 * trace; the refusals the case names must be a 4xx naming the field; and a refused request writes nothing.
 */
class ApiFuzzTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().offlineGraceSeconds(3600);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void everyRouteRefusesHostileInputWithA4xxNamingItAndWritesNothing() throws Exception {
    Map<String, String> fixtures = fixtures();
    List<String> routes = RouterRoutes.of(cp.running.api().router());
    for (String route : routes) {
      boolean writes = !route.startsWith("GET ") && !route.startsWith("HEAD ") && !route.startsWith("OPTIONS ");
      assertTrue(!writes || ApiSamples.BODIES.containsKey(route) || ApiSamples.WITHOUT_BODY.contains(route),
          route + " is neither in ApiSamples.BODIES nor in ApiSamples.WITHOUT_BODY: give the fuzz its body");
    }
    List<ApiCase> cases = ApiCases.generate(routes, ADMIN, prefix -> fixtures.entrySet().stream()
        .filter(fixture -> prefix.endsWith(fixture.getKey())).map(Map.Entry::getValue).findFirst()
        .orElseThrow(() -> new AssertionError("no fixture for a parameter after " + prefix)));
    WrittenState state = WrittenState.of(cp.pool());
    Map<String, String> before = state.read();
    List<String> failures = new ArrayList<>();
    int refused = 0;
    for (ApiCase c : cases) {
      HttpResponse<String> response;
      try {
        response = send(c);
      } catch (HttpTimeoutException e) {
        failures.add(c + ": no answer within 15 s");
        continue;
      }
      Map<String, String> after = state.read();
      String problem = judge(c, response, before, after);
      if (problem != null) {
        failures.add(c + ": " + problem);
      }
      refused += response.statusCode() >= 400 ? 1 : 0;
      before = after;
    }
    assertTrue(cases.size() >= 300, "only " + cases.size() + " cases");
    assertEquals(List.of(), failures, failures.size() + " of " + cases.size() + " cases failed");
    assertTrue(refused > cases.size() / 2, "most hostile requests are refused: " + refused);
  }

  private static String judge(ApiCase c, HttpResponse<String> response, Map<String, String> before,
                              Map<String, String> after) {
    int status = response.statusCode();
    String body = response.body();
    if (status >= 500) {
      return "answered " + status + " " + abbreviated(body);
    }
    if (body.contains("Exception") || body.contains("\tat ") || body.contains(".java:")) {
      return "a stack trace in the answer: " + abbreviated(body);
    }
    if (status >= 400) {
      List<String> written = WrittenState.changed(before, after);
      if (!written.isEmpty()) {
        return "refused with " + status + " yet wrote to " + written;
      }
    }
    if (c.expect() == Expect.ANSWERED || status == 431) {
      return null; // 431: netty refuses headers over 8 KiB before any route runs, with no body to name them in
    }
    if (status < 400) {
      return "accepted with " + status + " " + abbreviated(body);
    }
    JsonObject error;
    try {
      error = new JsonObject(body);
    } catch (RuntimeException e) {
      return "a " + status + " without a JSON error body: " + abbreviated(body);
    }
    if (error.getString("message") == null && error.getString("error") == null) {
      return "a " + status + " whose body says nothing: " + abbreviated(body);
    }
    if (c.expect() == Expect.NAMED) {
      String field = String.valueOf(error.getString("field"));
      if (!field.contains(c.field()) && !String.valueOf(error.getString("message")).contains(c.field())) {
        return "a " + status + " that does not name " + c.field() + ": " + abbreviated(body);
      }
    }
    return null;
  }

  private HttpResponse<String> send(ApiCase c) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cp.running.httpPort()
        + c.path())).timeout(Duration.ofSeconds(15)).method(c.method(), c.body() == null
        ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(c.body()));
    if (c.token() != null) {
      request.header("Authorization", "Bearer " + c.token());
    }
    if (c.contentType() != null) {
      request.header("Content-Type", c.contentType());
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The objects the routes' path parameters name: a tenant and its token, a queue, a node, a task and a service. */
  private static Map<String, String> fixtures() throws Exception {
    cp.json("POST", "/api/v1/tenants", ADMIN, "{\"name\":\"" + ApiSamples.TENANT + "\"}", 201);
    // cordoned, so no task the fuzz creates is bound and the scheduler writes only pending reasons
    cp.json("POST", "/api/v1/queues", ADMIN, "{\"name\":\"" + ApiSamples.QUEUE + "\",\"guaranteed\":1,\"max\":2}",
        201);
    ControlPlaneHarness.await(cp.vertx.eventBus().request(BusAddresses.NODE_HEARTBEAT, new JsonObject()
        .put("node_id", ApiSamples.NODE).put("boot_id", "b").put("seq", 1).put("gpu_vendor", "nvidia")
        .put("cpu_cores", 8).put("memory_total_gb", 64).put("active_tasks", new JsonArray())
        .put("cards", new JsonArray().add(new JsonObject().put("index", 0).put("model", "A100-SXM4-80GB")
            .put("memory_total_mb", 81920)))));
    cp.json("POST", "/api/v1/nodes/" + ApiSamples.NODE + "/cordon", ADMIN, null, 200);
    String task = cp.submit("{\"name\":\"fz-fixture\",\"command\":[\"true\"],\"gpu_required\":99}");
    String service = cp.json("POST", "/api/v1/groups", ADMIN, "{\"name\":\"fz-fixture\",\"type\":\"inference\","
        + "\"replicas\":0,\"template\":{\"command\":[\"true\"],\"gpu_required\":1}}", 201).getString("id");
    String token = cp.json("GET", "/api/v1/tenants/" + ApiSamples.TENANT + "/tokens", ADMIN, null, 200)
        .getJsonArray("tokens").getJsonObject(0).getString("id");
    return Map.of("/tasks/", task, "/groups/", service, "/nodes/", ApiSamples.NODE, "/queues/", ApiSamples.QUEUE,
        "/plugins/", "frag", "/tenants/", ApiSamples.TENANT, "/tokens/", token);
  }

  private static String abbreviated(String body) {
    return body.length() <= 300 ? body : body.substring(0, 300) + "…";
  }
}
