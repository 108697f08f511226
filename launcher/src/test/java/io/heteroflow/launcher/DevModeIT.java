package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The README's promise, checked on the real artifact: {@code java -jar heteroflow.jar dev} in its own process
 * lists the fleet, runs the hello task, refuses an unknown field, and on SIGTERM leaves no PostgreSQL behind.
 */
class DevModeIT {
  private static final HttpClient PROBE = HttpClient.newHttpClient();
  private JarProcess dev;
  private Path root;

  @AfterEach
  void killLeftovers() {
    if (dev != null) {
      dev.close();
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

  /** A GET's status within 5 s; -1 while nothing listens; a connection accepted and left unanswered fails. */
  private static int status(String url) {
    try {
      return PROBE.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).GET().build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (HttpTimeoutException e) {
      throw new AssertionError(url + ": a connection accepted but not answered within 5 s", e);
    } catch (IOException refused) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void devModeEndToEnd() throws Exception {
    int port = JarProcess.freePort();
    dev = JarProcess.start(Map.of(), "dev", "--http-port", String.valueOf(port));
    String base = "http://localhost:" + port;
    // from launch on, every connection accepted is answered: 503 while starting, then 200 once ready
    Set<Integer> answers = new TreeSet<>();
    dev.eventually(Duration.ofSeconds(90), "ready", () -> {
      int status = status(base + "/health/ready");
      if (status > 0) {
        answers.add(status);
      }
      return status == 200;
    });
    assertTrue(Set.of(200, 503).containsAll(answers), "ready answered 503 (starting), then 200: " + answers);
    assertEquals(200, status(base + "/health/live"));
    dev.eventually(Duration.ofSeconds(90), "dev to print its banner", () -> dev.output().contains("Press Ctrl-C"));
    String banner = dev.output();
    assertTrue(banner.contains("http://localhost:" + port + "/"), banner);
    assertTrue(banner.contains("Admin token: from HETEROFLOW_ADMIN_TOKEN (not printed)"), banner);
    assertFalse(banner.contains(JarProcess.TOKEN), "a token from the environment is never printed: " + banner);
    Matcher dataDir = Pattern.compile("data in (\\S+?),").matcher(banner);
    assertTrue(dataDir.find(), banner);
    root = Path.of(dataDir.group(1));
    assertTrue(Files.isDirectory(root));
    // PostgreSQL asks for the password in a 0600 file, printed as where it is, never as itself
    Path passwordFile = root.resolve("pg-password");
    assertTrue(Pattern.compile("PostgreSQL: +postgresql://postgres@localhost:[0-9]+/postgres \\(password in "
        + Pattern.quote(passwordFile + ", 0600;")).matcher(banner).find(), banner);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile)));
    String pgPassword = Files.readString(passwordFile).strip();
    assertFalse(banner.contains(pgPassword), "the PostgreSQL password is never printed: " + banner);

    dev.eventually(Duration.ofSeconds(60), "the fleet to be listed",
        () -> json(get(base + "/api/v1/nodes")).getInteger("count", 0) >= 8);

    HttpResponse<String> created = post(base + "/api/v1/tasks", "{\"name\":\"hello\",\"command\":[\"sh\",\"-c\","
        + "\"echo hello; echo $CUDA_VISIBLE_DEVICES\"],\"gpu_required\":1,\"gpu_type\":\"nvidia\"}");
    assertEquals(201, created.statusCode(), created.body());
    String id = json(created).getString("id");
    dev.eventually(Duration.ofSeconds(30), "hello to succeed",
        () -> "succeeded".equals(json(get(base + "/api/v1/tasks/" + id)).getString("status")));
    List<String> logLines = get(base + "/api/v1/tasks/" + id + "/logs").body().lines().toList();
    assertEquals("hello", logLines.get(0));
    assertTrue(logLines.get(1).matches("[0-9]+"), "a card index: " + logLines);

    // a tenant's task sees none of the agent's secrets: its environment starts empty (README "Execution")
    HttpResponse<String> envTask = post(base + "/api/v1/tasks", "{\"name\":\"e\",\"command\":[\"sh\",\"-c\",\"env\"]}");
    assertEquals(201, envTask.statusCode(), envTask.body());
    String envId = json(envTask).getString("id");
    dev.eventually(Duration.ofSeconds(30), "env to succeed",
        () -> "succeeded".equals(json(get(base + "/api/v1/tasks/" + envId)).getString("status")));
    String envLogs = get(base + "/api/v1/tasks/" + envId + "/logs").body();
    assertTrue(envLogs.contains("HETEROFLOW_TASK_ID=" + envId), envLogs);
    assertFalse(envLogs.contains(JarProcess.TOKEN), "the admin token reached a task: " + envLogs);
    assertFalse(envLogs.contains("HETEROFLOW_ADMIN_TOKEN"), envLogs);
    assertFalse(envLogs.contains(pgPassword), "the PostgreSQL password reached a task: " + envLogs);

    HttpResponse<String> unknown = post(base + "/api/v1/tasks", "{\"name\":\"x\",\"command\":[\"true\"],\"gpus\":1}");
    assertEquals(400, unknown.statusCode());
    assertEquals("gpus", json(unknown).getString("field"));
    assertTrue(get(base + "/").body().contains("HeteroFlow"), "the web UI is served");

    List<ProcessHandle> postgres = postgresOf(root);
    assertFalse(postgres.isEmpty(), "dev runs an embedded PostgreSQL in " + root);
    dev.process.destroy();
    assertTrue(dev.process.waitFor(60, TimeUnit.SECONDS), "dev stops on SIGTERM");
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (postgres.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(postgres.stream().noneMatch(ProcessHandle::isAlive), "no PostgreSQL left behind");
    assertFalse(Files.exists(root), "the temporary data directory is removed");
  }
}
