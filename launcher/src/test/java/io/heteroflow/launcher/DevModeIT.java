package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The README's promise, checked on the real artifact: {@code java -jar heteroflow.jar dev} in its own process
 * lists the fleet, runs the hello task, refuses an unknown field, and on SIGTERM leaves no PostgreSQL behind.
 */
class DevModeIT {
  private static final String TOKEN = "dev-mode-it-token";
  private final HttpClient http = HttpClient.newHttpClient();
  private Process dev;
  private Path root;

  @AfterEach
  void killLeftovers() {
    if (dev != null && dev.isAlive()) {
      dev.descendants().forEach(ProcessHandle::destroyForcibly);
      dev.destroyForcibly();
    }
    if (root != null) {
      postgresOf(root).forEach(ProcessHandle::destroyForcibly);
    }
  }

  /** pg_ctl daemonises the embedded server, so it is found by its data directory, not as a child. */
  private static List<ProcessHandle> postgresOf(Path root) {
    return ProcessHandle.allProcesses()
        .filter(process -> process.info().commandLine().orElse("").contains(root.toString()))
        .toList();
  }

  @Test
  void devModeEndToEnd() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path output = Files.createTempFile("heteroflow-dev-it-", ".log");
    String java = ProcessHandle.current().info().command().orElse("java");
    ProcessBuilder builder = new ProcessBuilder(java, "-jar", Path.of("target", "heteroflow.jar").toString(), "dev",
        "--http-port", String.valueOf(port)).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().put("HETEROFLOW_ADMIN_TOKEN", TOKEN);
    dev = builder.start();

    eventually(Duration.ofSeconds(90), "dev to print its banner", () -> read(output).contains("Press Ctrl-C"));
    String banner = read(output);
    assertTrue(banner.contains("http://localhost:" + port + "/"), banner);
    assertTrue(banner.contains("Admin token: " + TOKEN), banner);
    Matcher dataDir = Pattern.compile("data in (\\S+?),").matcher(banner);
    assertTrue(dataDir.find(), banner);
    root = Path.of(dataDir.group(1));
    assertTrue(Files.isDirectory(root));

    String base = "http://localhost:" + port;
    eventually(Duration.ofSeconds(60), "the fleet to be listed",
        () -> json(get(base + "/api/v1/nodes")).getInteger("count", 0) >= 8);

    HttpResponse<String> created = post(base + "/api/v1/tasks", "{\"name\":\"hello\",\"command\":[\"sh\",\"-c\","
        + "\"echo hello; echo $CUDA_VISIBLE_DEVICES\"],\"gpu_required\":1,\"gpu_type\":\"nvidia\"}");
    assertEquals(201, created.statusCode(), created.body());
    String id = json(created).getString("id");
    eventually(Duration.ofSeconds(30), "hello to succeed",
        () -> "succeeded".equals(json(get(base + "/api/v1/tasks/" + id)).getString("status")));
    List<String> logLines = get(base + "/api/v1/tasks/" + id + "/logs").body().lines().toList();
    assertEquals("hello", logLines.get(0));
    assertTrue(logLines.get(1).matches("[0-9]+"), "a card index: " + logLines);

    HttpResponse<String> unknown = post(base + "/api/v1/tasks", "{\"name\":\"x\",\"command\":[\"true\"],\"gpus\":1}");
    assertEquals(400, unknown.statusCode());
    assertEquals("gpus", json(unknown).getString("field"));
    assertTrue(get(base + "/").body().contains("HeteroFlow"), "the web UI is served");

    List<ProcessHandle> postgres = postgresOf(root);
    assertFalse(postgres.isEmpty(), "dev runs an embedded PostgreSQL in " + root);
    dev.destroy();
    assertTrue(dev.waitFor(60, TimeUnit.SECONDS), "dev stops on SIGTERM");
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (postgres.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(postgres.stream().noneMatch(ProcessHandle::isAlive), "no PostgreSQL left behind");
    assertFalse(Files.exists(root), "the temporary data directory is removed");
  }

  private HttpResponse<String> get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN).GET().build());
  }

  private HttpResponse<String> post(String url, String body) {
    return send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  private HttpResponse<String> send(HttpRequest request) {
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static JsonObject json(HttpResponse<String> response) {
    return response.body().startsWith("{") ? new JsonObject(response.body()) : new JsonObject();
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "";
    }
  }

  private void eventually(Duration timeout, String what, BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!dev.isAlive()) {
        throw new AssertionError("dev exited (" + dev.exitValue() + ") while waiting for " + what);
      }
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (IllegalStateException notYet) {
        // connection refused while starting: keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("timed out waiting for " + what);
  }
}
