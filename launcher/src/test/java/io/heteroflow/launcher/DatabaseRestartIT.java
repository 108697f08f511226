package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL restarted under load — stopped cleanly, or crashed ({@code kill -9} of the postmaster) and started
 * again on the same data directory (crash recovery replays the WAL): while it is down the API answers 503, the
 * pools reconnect by themselves, and every task acknowledged with 201 is there and runs to the end. The server
 * commits synchronously, as production does, so an acknowledged commit survives the crash (with zonky's default,
 * synchronous_commit off, the crash case lost acknowledged tasks). One PostgreSQL data directory, server and
 * agent serve both tests (each starts from a ready server with its node online and follows only its own tasks).
 */
class DatabaseRestartIT {
  private static Path dataDir;
  private static int pgPort;
  private static EmbeddedPostgres postgres;
  private static JarProcess server;
  private static JarProcess agent;
  private static String base;

  @BeforeAll
  static void start() throws Exception {
    dataDir = Files.createTempDirectory("restart-pg-");
    pgPort = JarProcess.freePort();
    postgres = startPostgres(dataDir, pgPort);
    Map<String, String> cluster = Map.of("HETEROFLOW_CLUSTER_NAME", "hf-restart-" + ProcessHandle.current().pid());
    int port = JarProcess.freePort();
    server = JarProcess.start(cluster, "server", "--pg-url",
        "postgresql://postgres:postgres@localhost:" + pgPort + "/postgres", "--http-port", String.valueOf(port));
    base = "http://localhost:" + port;
    server.eventually(Duration.ofSeconds(90), "the control plane", () -> server.output().contains("control plane is up"));
    Path node = Files.createTempFile("node-", ".yaml");
    // 64 cards: the tasks accepted around the outage (about 50) bind in a round or two once it is over; on 8
    // cards they drained 8 to a round for 20-40 s, which the claim does not need
    Files.writeString(node, "id: restart-1\nvendor: nvidia\ncards: 64\ncpu_cores: 256\n");
    agent = JarProcess.start(cluster, "agent", "--simulate", node.toString());
  }

  @AfterAll
  static void stop() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (server != null) {
      server.close();
    }
    if (postgres != null) {
      postgres.close();
    }
  }

  private static EmbeddedPostgres startPostgres(Path dataDir, int port) throws Exception {
    return EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).setPort(port)
        .setServerConfig("synchronous_commit", "on") // zonky's default is off: an acknowledged commit could be lost
        .setPGStartupWait(Duration.ofSeconds(60)) // crash recovery comes first after a kill -9
        .start();
  }

  /** How PostgreSQL goes down under load. */
  private interface Outage {
    void bringDown(EmbeddedPostgres postgres, Path dataDir) throws Exception;
  }

  @Test
  void theApiAnswers503WhileTheDatabaseIsDownAndNothingIsLost() throws Exception {
    survives((postgres, dataDir) -> postgres.close());
  }

  @Test
  void aCrashedDatabaseLosesNoAcknowledgedTask() throws Exception {
    survives(DatabaseRestartIT::crash);
  }

  /**
   * {@code kill -9} of the real postmaster (its pid is the first line of postmaster.pid in the data directory),
   * as an out-of-memory killer would; its backends are killed too if they have not noticed within 10 s, so the
   * restart finds no one attached to the old shared memory. The zonky wrapper is closed only afterwards: its
   * pg_ctl stop finds no server, and the data directory's lock is released for the restart.
   */
  private static void crash(EmbeddedPostgres postgres, Path dataDir) throws Exception {
    long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
    ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
    List<ProcessHandle> backends = postmaster.children().toList();
    assertTrue(postmaster.info().command().orElse("").endsWith("postgres"), "the postmaster: " + postmaster.info());
    assertEquals(0, new ProcessBuilder("kill", "-9", String.valueOf(pid)).start().waitFor());
    postmaster.onExit().get(10, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (backends.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    backends.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    postgres.close();
  }

  private void survives(Outage outage) throws Exception {
    if (postgres == null) {
      postgres = startPostgres(dataDir, pgPort); // the test before failed while it was down
    }
    server.eventually(Duration.ofSeconds(60), "ready", () -> get(base + "/health/ready").statusCode() == 200);
    server.eventually(Duration.ofSeconds(60), "the node online",
        () -> "online".equals(json(get(base + "/api/v1/nodes/restart-1")).getString("status")));

    Map<String, Boolean> accepted = new ConcurrentHashMap<>();
    List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean loading = new AtomicBoolean(true);
    Thread load = new Thread(() -> {
      int i = 0;
      while (loading.get()) {
        HttpResponse<String> response = post(base + "/api/v1/tasks", "{\"name\":\"load-" + i++ + "\","
            + "\"command\":[\"true\"],\"gpu_required\":1}");
        statuses.add(response.statusCode());
        if (response.statusCode() == 201) {
          accepted.put(json(response).getString("id"), true);
        }
      }
    });
    load.start();
    server.eventually(Duration.ofSeconds(30), "some tasks accepted", () -> accepted.size() >= 20);

    outage.bringDown(postgres, dataDir);
    postgres = null;
    server.eventually(Duration.ofSeconds(30), "503 while the database is down", () -> statuses.contains(503));
    assertEquals(503, get(base + "/health/ready").statusCode(), "not ready without its database");
    assertEquals(503, get(base + "/health").statusCode(), "the alias of ready");
    assertEquals(200, get(base + "/health/live").statusCode(), "alive all the same");

    postgres = startPostgres(dataDir, pgPort);
    int acceptedBefore = accepted.size();
    server.eventually(Duration.ofSeconds(60), "submissions accepted again",
        () -> accepted.size() >= acceptedBefore + 20);
    loading.set(false);
    load.join();
    assertTrue(statuses.stream().allMatch(status -> status == 201 || status == 503), () -> "only 201 or 503: "
        + statuses.stream().filter(status -> status != 201 && status != 503).distinct().toList()
        + "; the server logged:\n" + failuresLogged(server.output()));

    server.eventually(Duration.ofSeconds(120), "every accepted task succeeded", () -> accepted.keySet().stream()
        .allMatch(id -> "succeeded".equals(json(get(base + "/api/v1/tasks/" + id)).getString("status"))));
    server.eventually(Duration.ofSeconds(30), "ready again", () -> get(base + "/health/ready").statusCode() == 200);
    assertEquals(200, get(base + "/health").statusCode());
  }

  /** The server's log from its first failed request on (its stack trace says what was not mapped to 503). */
  private static String failuresLogged(String output) {
    int at = output.indexOf(" failed");
    return at < 0 ? "(no failed request logged)" : output.substring(Math.max(0, at - 200), Math.min(output.length(), at + 4000));
  }
}
