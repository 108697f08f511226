package io.heteroflow.controlplane.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.json.JsonObject;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Strict decoding (SPEC §10): each bad input is a 4xx naming the field, and nothing is written. */
class ApiDecodingTest {
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static final Pattern PARAM = Pattern.compile("\\{([A-Za-z]+)}");
  private static final String OK = "\"name\":\"t\",\"command\":[\"true\"]";


  static Stream<Arguments> badTasks() {
    return Stream.of(
        bad("unknown field", "{" + OK + ",\"require_nvlink\":true}", "require_nvlink"),
        bad("a key given twice", "{" + OK + ",\"priority\":10,\"priority\":90}", "priority"),
        bad("a key given twice in a nested object", "{" + OK + ",\"env\":{\"A\":\"1\",\"A\":\"2\"}}", "A"),
        bad("a comment", "{" + OK + ",/* no */\"priority\":10}", null),
        bad("a line comment", "{" + OK + "// no\n}", null),
        bad("single quotes", "{'name':'t','command':['true']}", null),
        bad("trailing garbage after the object", "{" + OK + "} x", null),
        bad("unknown policy field", "{" + OK + ",\"topology_constraints\":{}}", "topology_constraints"),
        bad("unknown field, null value", "{" + OK + ",\"colour\":null}", "colour"),
        bad("name missing", "{\"command\":[\"true\"]}", "name"),
        bad("name not a string", "{\"name\":5,\"command\":[\"true\"]}", "name"),
        bad("name empty", "{\"name\":\"\",\"command\":[\"true\"]}", "name"),
        bad("name too long", "{\"name\":\"" + "a".repeat(200) + "\",\"command\":[\"true\"]}", "name"),
        bad("name with spaces", "{\"name\":\"a b\",\"command\":[\"true\"]}", "name"),
        bad("type unknown", "{" + OK + ",\"type\":\"batch\"}", "type"),
        bad("type not a string", "{" + OK + ",\"type\":1}", "type"),
        bad("command a string", "{\"name\":\"t\",\"command\":\"echo hi\"}", "command"),
        bad("command item a number", "{\"name\":\"t\",\"command\":[\"echo\",1]}", "command[1]"),
        bad("command missing without image", "{\"name\":\"t\"}", "command"),
        bad("command empty without image", "{\"name\":\"t\",\"command\":[]}", "command"),
        bad("env an array", "{" + OK + ",\"env\":[\"A=1\"]}", "env"),
        bad("env value a number", "{" + OK + ",\"env\":{\"X\":1}}", "env.X"),
        bad("env key invalid", "{" + OK + ",\"env\":{\"1BAD\":\"x\"}}", "env.1BAD"),
        bad("env sets the visibility variable", "{" + OK + ",\"env\":{\"CUDA_VISIBLE_DEVICES\":\"0\"}}",
            "env.CUDA_VISIBLE_DEVICES"),
        bad("env sets a HeteroFlow variable", "{" + OK + ",\"env\":{\"HETEROFLOW_TASK_ID\":\"x\"}}",
            "env.HETEROFLOW_TASK_ID"),
        badEnv("another vendor's visibility variable", "ASCEND_RT_VISIBLE_DEVICES"),
        badEnv("a device selector", "ROCR_VISIBLE_DEVICES"),
        badEnv("the device order", "CUDA_DEVICE_ORDER"),
        badEnv("an MPS limit", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        badEnv("the MPS pipe", "CUDA_MPS_PIPE_DIRECTORY"),
        badEnv("a preloaded library", "LD_PRELOAD"),
        badEnv("the library path", "LD_LIBRARY_PATH"),
        badEnv("the rendezvous address", "MASTER_ADDR"),
        badEnv("the world size", "WORLD_SIZE"),
        badEnv("a local rank", "LOCAL_RANK"),
        badEnv("the node rank", "NODE_RANK"),
        badEnv("the inference port", "PORT"),
        badEnv("the per-task home", "HOME"),
        bad("priority above 100", "{" + OK + ",\"priority\":101}", "priority"),
        bad("priority negative", "{" + OK + ",\"priority\":-1}", "priority"),
        bad("priority a string", "{" + OK + ",\"priority\":\"high\"}", "priority"),
        bad("priority fractional", "{" + OK + ",\"priority\":50.5}", "priority"),
        bad("preemptible a string", "{" + OK + ",\"preemptible\":\"yes\"}", "preemptible"),
        bad("training cannot be preemptible", "{" + OK + ",\"type\":\"training\",\"preemptible\":true}", "preemptible"),
        bad("gpu_required negative", "{" + OK + ",\"gpu_required\":-1}", "gpu_required"),
        bad("gpu_required a string", "{" + OK + ",\"gpu_required\":\"2\"}", "gpu_required"),
        bad("gpu_required fractional", "{" + OK + ",\"gpu_required\":1.5}", "gpu_required"),
        bad("gpu_required absurd", "{" + OK + ",\"gpu_required\":100000}", "gpu_required"),
        bad("gpu_memory_mb negative", "{" + OK + ",\"gpu_required\":1,\"gpu_memory_mb\":-5}", "gpu_memory_mb"),
        bad("gpu_memory_mb a string", "{" + OK + ",\"gpu_memory_mb\":\"4G\"}", "gpu_memory_mb"),
        bad("gpu_type unknown vendor", "{" + OK + ",\"gpu_type\":\"amd\"}", "gpu_type"),
        bad("gpu_type a number", "{" + OK + ",\"gpu_type\":5}", "gpu_type"),
        bad("gpu_model a string", "{" + OK + ",\"gpu_model\":\"V100\"}", "gpu_model"),
        bad("gpu_model item a number", "{" + OK + ",\"gpu_model\":[1]}", "gpu_model[0]"),
        bad("cpu_cores negative", "{" + OK + ",\"cpu_cores\":-1}", "cpu_cores"),
        bad("cpu_cores a string", "{" + OK + ",\"cpu_cores\":\"4\"}", "cpu_cores"),
        bad("memory_mb negative", "{" + OK + ",\"memory_mb\":-1}", "memory_mb"),
        bad("timeout_seconds zero", "{" + OK + ",\"timeout_seconds\":0}", "timeout_seconds"),
        bad("timeout_seconds a string", "{" + OK + ",\"timeout_seconds\":\"1h\"}", "timeout_seconds"),
        bad("termination_grace_seconds negative", "{" + OK + ",\"termination_grace_seconds\":-1}",
            "termination_grace_seconds"),
        bad("termination_grace_seconds over 600", "{" + OK + ",\"termination_grace_seconds\":601}",
            "termination_grace_seconds"),
        bad("checkpoint a string", "{" + OK + ",\"checkpoint\":\"USR1\"}", "checkpoint"),
        bad("checkpoint without signal", "{" + OK + ",\"checkpoint\":{\"timeout_seconds\":5}}", "checkpoint.signal"),
        bad("checkpoint signal KILL", "{" + OK + ",\"checkpoint\":{\"signal\":\"SIGKILL\"}}", "checkpoint.signal"),
        bad("checkpoint timeout zero", "{" + OK + ",\"checkpoint\":{\"signal\":\"USR1\",\"timeout_seconds\":0}}",
            "checkpoint.timeout_seconds"),
        bad("checkpoint timeout a string", "{" + OK + ",\"checkpoint\":{\"signal\":\"USR1\",\"timeout_seconds\":\"2m\"}}",
            "checkpoint.timeout_seconds"),
        bad("checkpoint unknown field", "{" + OK + ",\"checkpoint\":{\"signal\":\"USR1\",\"path\":\"/x\"}}",
            "checkpoint.path"),
        bad("termination_grace_seconds a string", "{" + OK + ",\"termination_grace_seconds\":\"10s\"}",
            "termination_grace_seconds"),
        bad("node_selector an array", "{" + OK + ",\"node_selector\":[\"pool\"]}", "node_selector"),
        bad("node_selector value a number", "{" + OK + ",\"node_selector\":{\"pool\":1}}", "node_selector.pool"),
        bad("labels a string", "{" + OK + ",\"labels\":\"nvlink\"}", "labels"),
        bad("group_id a number", "{" + OK + ",\"group_id\":7}", "group_id"),
        bad("image a number", "{" + OK + ",\"image\":7}", "image"),
        bad("image blank without command", "{\"name\":\"t\",\"image\":\"  \"}", "image"),
        bad("image empty with a command", "{" + OK + ",\"image\":\"\"}", "image"),
        bad("command program blank", "{\"name\":\"t\",\"command\":[\" \",\"x\"]}", "command[0]"),
        bad("command program empty", "{\"name\":\"t\",\"command\":[\"\"]}", "command[0]"),
        bad("lone high surrogate in name", "{\"name\":\"t\\ud800\",\"command\":[\"true\"]}", "name"),
        bad("lone low surrogate in group_id", "{" + OK + ",\"group_id\":\"g\\udc00\"}", "group_id"),
        bad("surrogates reversed in image", "{" + OK + ",\"image\":\"i\\ude00\\ud83d\"}", "image"),
        bad("lone surrogate in a command item", "{\"name\":\"t\",\"command\":[\"echo\",\"\\ud800\"]}",
            "command[1]"),
        bad("lone surrogate in an env value", "{" + OK + ",\"env\":{\"X\":\"\\ud800\"}}", "env.X"),
        bad("lone surrogate in an env key", "{" + OK + ",\"env\":{\"\\ud800\":\"x\"}}", "env.\\ud800"),
        bad("lone surrogate in a label value", "{" + OK + ",\"labels\":{\"a\":\"\\udfff\"}}", "labels.a"),
        bad("lone surrogate in a node_selector value", "{" + OK + ",\"node_selector\":{\"pool\":\"\\ud800\"}}",
            "node_selector.pool"),
        bad("lone surrogate in a gpu_model item", "{" + OK + ",\"gpu_model\":[\"\\ud800\"]}", "gpu_model[0]"),
        bad("NUL in an env value", "{" + OK + ",\"env\":{\"X\":\"a\\u0000b\"}}", "env.X"),
        bad("NUL in an env key", "{" + OK + ",\"env\":{\"A\\u0000\":\"x\"}}", "env.A\\u0000"),
        bad("NUL in a label value", "{" + OK + ",\"labels\":{\"a\":\"\\u0000\"}}", "labels.a"),
        bad("NUL in a node_selector key", "{" + OK + ",\"node_selector\":{\"p\\u0000\":\"x\"}}",
            "node_selector.p\\u0000"),
        bad("NUL in the image", "{" + OK + ",\"image\":\"img\\u0000\"}", "image"),
        bad("unknown field with NUL in its name", "{" + OK + ",\"x\\u0000\":1}", "x\\u0000"),
        bad("malformed JSON", "{\"name\":", null),
        bad("a JSON array", "[]", null),
        bad("JSON null", "null", null),
        bad("a bare string", "\"task\"", null),
        bad("empty body", "", null));
  }

  /** A reserved name in env (protocol TaskEnvironment): 400 naming env.NAME. */
  private static Arguments badEnv(String what, String name) {
    return bad("env sets " + what, "{" + OK + ",\"env\":{\"OK_VAR\":\"1\",\"" + name + "\":\"x\"}}", "env." + name);
  }

  private static Arguments bad(String what, String body, String field) {
    return Arguments.of(what, body, field);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badTasks")
  void refusesBadTaskNamingTheField(String what, String body, String field) throws Exception {
    HttpResponse<String> response = cp.call("POST", "/api/v1/tasks", ControlPlaneHarness.ADMIN, body);
    assertEquals(400, response.statusCode(), what + ": " + response.body());
    JsonObject error = new JsonObject(response.body());
    assertEquals(field, error.getString("field"), what + ": " + response.body());
    if (field != null) {
      assertTrue(error.getString("message").contains(field), what + ": message names the field");
    }
    assertEquals(0, tasksWritten(), "nothing written for " + what);
  }

  @Test
  void aBodyThatIsNotDeclaredJsonIs415NamingContentType() throws Exception {
    long before = tasksWritten();
    for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded", null}) {
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cp.running.httpPort()
          + "/api/v1/tasks")).header("Authorization", "Bearer " + ControlPlaneHarness.ADMIN)
          .POST(HttpRequest.BodyPublishers.ofString("{" + OK + "}"));
      if (type != null) {
        request.header("Content-Type", type);
      }
      HttpResponse<String> response = HttpClient.newHttpClient().send(request.build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(415, response.statusCode(), type + ": " + response.body());
      assertEquals("Content-Type", new JsonObject(response.body()).getString("field"));
    }
    assertEquals(before, tasksWritten(), "nothing written");
    HttpResponse<String> charset = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
            "http://127.0.0.1:" + cp.running.httpPort() + "/api/v1/tasks"))
        .header("Authorization", "Bearer " + ControlPlaneHarness.ADMIN)
        .header("Content-Type", "application/json; charset=utf-8")
        .POST(HttpRequest.BodyPublishers.ofString("{\"command\":[\"true\"]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertField(charset, 400, "name"); // read as JSON: a charset parameter is fine
    assertEquals(0, tasksWritten());
  }

  @Test
  void oversizedBodyIs413() throws Exception {
    String body = "{" + OK + ",\"env\":{\"BIG\":\"" + "x".repeat(70 * 1024) + "\"}}";
    HttpResponse<String> response = cp.call("POST", "/api/v1/tasks", ControlPlaneHarness.ADMIN, body);
    assertEquals(413, response.statusCode());
    assertEquals("body_too_large", new JsonObject(response.body()).getString("code"));
    assertEquals(0, tasksWritten());
  }

  @Test
  void otherEndpointsDecodeStrictlyToo() throws Exception {
    String admin = ControlPlaneHarness.ADMIN;
    assertField(cp.call("POST", "/api/v1/tenants", admin, "{\"name\":\"Bad Name\"}"), 400, "name");
    assertField(cp.call("POST", "/api/v1/tenants", admin, "{\"name\":\"ok\",\"quota\":3}"), 400, "quota");
    assertField(cp.call("POST", "/api/v1/share-groups", admin, "{\"name\":\"g\",\"tenants\":[\"nobody\"]}"), 400,
        "tenants");
    assertField(cp.call("POST", "/api/v1/share-groups", admin, "{\"name\":\"g\"}"), 400, "tenants");
    assertField(cp.call("PUT", "/api/v1/nodes/n1/location", admin, "{\"building\":\"b1\"}"), 400, "building");
    assertField(cp.call("PUT", "/api/v1/nodes/n1/labels", admin, "{\"labels\":{\"a\":1}}"), 400, "labels.a");
    assertField(cp.call("GET", "/api/v1/tasks?status=sleeping", admin, null), 400, "status");
    assertField(cp.call("GET", "/api/v1/tasks?limit=0", admin, null), 400, "limit");
    assertEquals(0, tasksWritten());
    assertEquals(1, count("SELECT count(*) FROM tenants"), "only the built-in tenant");
  }

  /** Every route with a path parameter, also one added later: a NUL in it is a 400 naming the parameter. */
  @Test
  void nulInAnyPathParameterIsA400NamingIt() throws Exception {
    List<String> checked = new ArrayList<>();
    for (String route : ApiContractTest.routes(cp)) {
      String[] methodAndPath = route.split(" ", 2);
      Matcher param = PARAM.matcher(methodAndPath[1]);
      while (param.find()) {
        String path = methodAndPath[1].replace(param.group(), "a%00b").replaceAll("\\{[A-Za-z]+}", "x");
        String body = methodAndPath[0].equals("GET") ? null : "{}";
        assertField(cp.call(methodAndPath[0], path, ControlPlaneHarness.ADMIN, body), 400, param.group(1));
        checked.add(route);
      }
    }
    assertTrue(checked.size() >= 9, "checked " + checked);
    assertField(cp.call("GET", "/api/v1/nodes/%ED%A0%80", ControlPlaneHarness.ADMIN, null), 400, "id");
    assertField(cp.call("PUT", "/api/v1/nodes/n%001/labels", ControlPlaneHarness.ADMIN, "{\"labels\":{}}"), 400,
        "id");
    assertEquals(0, tasksWritten());
  }

  /** Every API route, also one added later: a query parameter it does not take is a 400 naming it. */
  @Test
  void unknownQueryParameterIsA400OnEveryRoute() throws Exception {
    List<String> checked = new ArrayList<>();
    for (String route : ApiContractTest.routes(cp)) {
      String[] methodAndPath = route.split(" ", 2);
      if (!methodAndPath[1].startsWith("/api/v1/") || methodAndPath[1].equals("/api/v1/openapi.yaml")) {
        continue;
      }
      String path = methodAndPath[1].replaceAll("\\{[A-Za-z]+}", "x") + "?stauts=pending";
      HttpResponse<String> response = cp.call(methodAndPath[0], path, ControlPlaneHarness.ADMIN,
          methodAndPath[0].equals("GET") ? null : "{}");
      assertField(response, 400, "stauts");
      assertEquals("unknown_query_parameter", new JsonObject(response.body()).getString("code"), route);
      checked.add(route);
    }
    assertTrue(checked.size() >= 15, "checked " + checked);
    assertEquals(0, tasksWritten());
  }

  /** Escapes java.net.URI refuses, sent as raw HTTP/1.1: a 400, not a 500. */
  @Test
  void malformedPercentEncodingIsA400() throws Exception {
    assertRaw("GET /api/v1/nodes/a%ZZ", "400", "invalid_path");
    assertRaw("GET /api/v1/nodes/a%2", "400", "invalid_path");
    assertRaw("GET /health%Z", "400", "invalid_path");
    assertRaw("GET /api/v1/tasks?status=%ZZ", "400", "invalid_query");
    assertRaw("GET /api/v1/tasks?status=pending", "200", "\"items\"");
  }

  private static void assertRaw(String requestLine, String status, String bodyPart) throws Exception {
    String response = raw(requestLine);
    assertEquals(status, response.split(" ")[1], response);
    assertTrue(response.contains(bodyPart), response);
  }

  private static String raw(String requestLine) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", cp.running.httpPort())) {
      socket.setSoTimeout(20_000);
      socket.getOutputStream().write((requestLine + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
          + ControlPlaneHarness.ADMIN + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void queryParametersAreChecked() throws Exception {
    String admin = ControlPlaneHarness.ADMIN;
    HttpResponse<String> typo = cp.call("GET", "/api/v1/tasks?stauts=pending", admin, null);
    assertField(typo, 400, "stauts");
    assertTrue(new JsonObject(typo.body()).getString("message").contains("limit, status"), typo.body());
    HttpResponse<String> invalid = cp.call("GET", "/api/v1/tasks?status=pending,sleeping", admin, null);
    assertField(invalid, 400, "status");
    for (TaskStatus status : TaskStatus.values()) {
      assertTrue(new JsonObject(invalid.body()).getString("message").contains(status.wire()), invalid.body());
    }
    assertField(cp.call("GET", "/api/v1/tasks?status=", admin, null), 400, "status");
    assertField(cp.call("GET", "/api/v1/tasks?status=Pending", admin, null), 400, "status");
    assertField(cp.call("GET", "/api/v1/tasks?status=pending%00", admin, null), 400, "status");
    assertField(cp.call("GET", "/api/v1/tasks?limit=ten", admin, null), 400, "limit");
    assertField(cp.call("GET", "/api/v1/tasks?limit=1001", admin, null), 400, "limit");
    assertField(cp.call("GET", "/api/v1/tasks?limit=-1", admin, null), 400, "limit");
    assertField(cp.call("GET", "/api/v1/tasks?limit=1&limit=2", admin, null), 400, "limit");
    assertField(cp.call("GET", "/api/v1/nodes?limit=5", admin, null), 400, "limit");
    assertField(cp.call("POST", "/api/v1/plugins/spread?action=enable&force=1", admin, null), 400, "force");
    assertEquals(200, cp.call("GET", "/api/v1/tasks?status=pending,running&limit=1000", admin, null).statusCode());
  }

  @Test
  void missingOrUnknownTokenIs401() throws Exception {
    assertEquals(401, cp.call("GET", "/api/v1/tasks", null, null).statusCode());
    assertEquals(401, cp.call("GET", "/api/v1/tasks", "not-a-token", null).statusCode());
    assertEquals(401, cp.call("POST", "/api/v1/tasks", null, "{" + OK + "}").statusCode());
    assertEquals(0, tasksWritten());
  }

  private static void assertField(HttpResponse<String> response, int status, String field) {
    assertEquals(status, response.statusCode(), response.body());
    assertEquals(field, new JsonObject(response.body()).getString("field"), response.body());
  }

  private static long tasksWritten() throws Exception {
    return count("SELECT count(*) FROM tasks");
  }

  private static long count(String sql) throws Exception {
    return ControlPlaneHarness.await(cp.pool().query(sql).execute()).iterator().next().getLong(0);
  }
}
