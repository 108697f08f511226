package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The SockJS bridge driven by the real third-party client ({@code @vertx/eventbus-bridge-client.js} on Node,
 * {@code src/test/node/eventbus-client}): a tenant submits over the bus, watches its task run to the end through the
 * task events (each status once, in order), gets the REST refusals as failures, and is refused another tenant's
 * events and a bad or missing token. Without Node the test is skipped, except with CI=true, where it fails.
 */
class EventBusClientTest {
  private static final Path CLIENT = Path.of("src/test/node/eventbus-client");
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      ControlPlaneHarness.node("nv-1", GpuVendor.NVIDIA, 2)));
  private static String alice;
  private static String bob;

  @BeforeAll
  static void start() throws Exception {
    eventually(Duration.ofSeconds(30), "the agent registered",
        () -> cp.get("/api/v1/nodes").getInteger("count") == 1);
    alice = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
  }

  @Test
  void aTenantSubmitsOverTheBridgeAndWatchesItsTaskRunButNothingElse() throws Exception {
    requireNode();
    // No stream is inherited: Node makes an inherited pipe non-blocking, and the forked test JVM's stdin and
    // stdout are surefire's channel (CI failed once with "std/in stream corrupted" after npm inherited them).
    File stderr = new File("target/eventbus-client.stderr.log");
    Process node = new ProcessBuilder("node", "client.js", "http://127.0.0.1:" + cp.running.httpPort(), alice,
        "alice", "bob").directory(CLIENT.toFile()).redirectError(stderr).start();
    Thread.sleep(1500); // the client is registered: bob's task now makes an event on bob's address
    cp.json("POST", "/api/v1/tasks", bob, "{\"name\":\"bobs-task\",\"command\":[\"true\"],"
        + "\"gpu_required\":64}", 201);
    assertTrue(node.waitFor(90, TimeUnit.SECONDS), "the node client finished");
    String out = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertEquals(0, node.exitValue(), out + "\n" + Files.readString(stderr.toPath()));
    JsonObject seen = new JsonObject(out.substring(out.lastIndexOf('\n') + 1));

    JsonObject submit = seen.getJsonObject("submit");
    assertEquals("201", submit.getString("status"), out);
    JsonObject task = submit.getJsonObject("body");
    assertEquals("alice", task.getString("tenant"));
    String id = task.getString("id");

    JsonObject invalid = seen.getJsonObject("invalid").getJsonObject("error");
    assertEquals(400, invalid.getInteger("failureCode"), out);
    assertEquals("gpu_required", new JsonObject(invalid.getString("message")).getString("field"), out);
    assertEquals(404, seen.getJsonObject("stopOther").getJsonObject("error").getInteger("failureCode"), out);

    List<String> statuses = seen.getJsonArray("events").stream().map(JsonObject.class::cast)
        .filter(event -> id.equals(event.getString("task_id"))).map(event -> event.getString("to")).toList();
    assertEquals(List.of("pending", "scheduled", "running", "succeeded"), statuses, out);
    assertTrue(seen.getJsonArray("events").stream().map(JsonObject.class::cast)
        .allMatch(event -> "alice".equals(event.getString("tenant"))), "only alice's events: " + out);

    assertRefused(seen.getJsonObject("badToken"), out);
    assertRefused(seen.getJsonObject("noToken"), out);
    JsonArray errors = seen.getJsonArray("errors");
    assertTrue(errors.stream().map(JsonObject.class::cast).anyMatch(error -> "good".equals(error.getString("bus"))),
        "registering for bob's events was refused: " + out);
    assertTrue(errors.stream().map(JsonObject.class::cast).anyMatch(error -> "bad".equals(error.getString("bus"))),
        "a bad token's frame was refused: " + out);
    assertEquals(1, cp.json("GET", "/api/v1/tasks", alice, null, 200).getInteger("count"),
        "only the valid submission made a task: " + out);
  }

  private static void assertRefused(JsonObject reply, String out) {
    assertNull(reply.getValue("status"), "refused, no reply: " + out);
    assertNull(reply.getValue("body"), "refused, no reply: " + out);
  }

  /** Node on the PATH and the client's packages (npm ci from the committed lock file when missing). */
  private static void requireNode() throws Exception {
    boolean present;
    try {
      present = new ProcessBuilder("node", "--version").start().waitFor() == 0;
    } catch (java.io.IOException e) {
      present = false;
    }
    if (!present && "true".equals(System.getenv("CI"))) {
      throw new AssertionError("node is not installed (CI=true: .ci/run installs nodejs npm)");
    }
    Assumptions.assumeTrue(present, "node is not installed");
    if (!Files.isDirectory(CLIENT.resolve("node_modules/@vertx/eventbus-bridge-client.js"))) {
      File log = new File("target/npm-ci.log");
      Process npm = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund").directory(CLIENT.toFile())
          .redirectErrorStream(true).redirectOutput(log).start();
      npm.getOutputStream().close();
      assertTrue(npm.waitFor(180, TimeUnit.SECONDS) && npm.exitValue() == 0, "npm ci in "
          + CLIENT.toAbsolutePath() + ":\n" + Files.readString(log.toPath()));
    }
  }
}
