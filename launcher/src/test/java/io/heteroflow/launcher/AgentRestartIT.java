package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A user's report, on the real artifact: a task running when {@code dev --data-dir DIR} stops must not stay
 * {@code running} after the restart, holding its 8 cards while another 8-card task starves. The restarted agent
 * does not report it twice in a row: it fails with {@code AgentRestarted} and its cards are bound again.
 */
class AgentRestartIT {
  private JarProcess dev;
  private Path dir;

  @AfterEach
  void cleanUp() throws Exception {
    if (dev != null) {
      dev.close();
    }
    if (dir != null) {
      // pg_ctl daemonises the embedded server: found by its data directory, not as a child
      ProcessHandle.allProcesses().filter(p -> p.info().commandLine().orElse("").contains(dir.toString()))
          .forEach(ProcessHandle::destroyForcibly);
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
      }
    }
  }

  private JarProcess startDev(int port) throws Exception {
    JarProcess started = JarProcess.start(Map.of(), "dev", "--http-port", String.valueOf(port),
        "--data-dir", dir.resolve("data").toString(), "--fleet", dir.resolve("fleet.yaml").toString());
    started.eventually(Duration.ofSeconds(120), "dev to print its banner",
        () -> started.output().contains("Press Ctrl-C"));
    return started;
  }

  private static String submitLong(String base) {
    HttpResponse<String> created = post(base + "/api/v1/tasks",
        "{\"name\":\"eight\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":8}");
    assertEquals(201, created.statusCode(), created.body());
    return json(created).getString("id");
  }

  private static JsonObject task(String base, String id) {
    return json(get(base + "/api/v1/tasks/" + id));
  }

  @Test
  void aTaskRunningWhenDevStopsFailsAsAgentRestartedAndItsCardsAreBoundAgain() throws Exception {
    dir = Files.createTempDirectory("heteroflow-restart-it-");
    Files.writeString(dir.resolve("fleet.yaml"), "nodes:\n  - id: only-node\n    vendor: nvidia\n    cards: 8\n");
    int port = JarProcess.freePort();
    String base = "http://localhost:" + port;
    dev = startDev(port);
    String first = submitLong(base);
    dev.eventually(Duration.ofSeconds(60), "the 8-card task to run",
        () -> "running".equals(task(base, first).getString("status")));

    dev.process.destroy();
    assertTrue(dev.process.waitFor(60, TimeUnit.SECONDS), "dev stops on SIGTERM");
    dev = startDev(port);
    long up = System.nanoTime();
    dev.eventually(Duration.ofSeconds(30), "the task lost with the old agent to fail",
        () -> "failed".equals(task(base, first).getString("status")));
    double seconds = (System.nanoTime() - up) / 1e9;
    JsonObject lost = task(base, first);
    assertEquals("AgentRestarted", lost.getJsonObject("reason").getString("code"), lost.encode());
    assertTrue(seconds < 15, "settled " + seconds + " s after the restart");

    String second = submitLong(base);
    dev.eventually(Duration.ofSeconds(30), "a new 8-card task to bind the freed cards",
        () -> "running".equals(task(base, second).getString("status")));
  }
}
