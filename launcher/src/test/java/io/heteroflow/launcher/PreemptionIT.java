package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.cluster.PreemptWatchdogVerticle;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Preemption on the real artifact (SPEC §6): {@code heteroflow server} and {@code heteroflow agent} as two JVMs on
 * the clustered bus, one real PostgreSQL. A burst of high-priority tasks on a full fleet of preemptible ones: every
 * preemptor runs, every victim returns to the queue and succeeds later, no card is ever held by two tasks. Then
 * the agent is frozen with SIGSTOP during a preemption: the preempt watchdog settles it after the server's
 * {@code --preempt-timeout-seconds} ({@link #PREEMPT_TIMEOUT_SECONDS} here, 60 s by default), and once thawed the
 * agent is told to stop the orphaned process and its confirmation settles nothing.
 */
class PreemptionIT {
  /** The server's preempt timeout: the watchdog looks every half of it, so it forces within 1.5 of it. */
  static final int PREEMPT_TIMEOUT_SECONDS = 5;

  private final List<JarProcess> processes = new ArrayList<>();
  private JarProcess agent;

  @AfterEach
  void stop() throws Exception {
    if (agent != null) {
      signal(agent, "CONT");
    }
    processes.forEach(JarProcess::close);
  }

  private static void signal(JarProcess process, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(process.process.pid())).start();
    assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal);
  }

  private static String submit(String base, String name, int priority, boolean preemptible, int cards, String script) {
    HttpResponse<String> created = post(base + "/api/v1/tasks", "{\"name\":\"" + name + "\",\"command\":[\"sh\",\"-c\",\""
        + script + "\"],\"gpu_required\":" + cards + ",\"priority\":" + priority + ",\"preemptible\":" + preemptible
        + "}");
    assertEquals(201, created.statusCode(), created.body());
    return json(created).getString("id");
  }

  private static JsonObject task(String base, String id) {
    return json(get(base + "/api/v1/tasks/" + id));
  }

  private static List<JsonObject> events(String base, String id) {
    List<JsonObject> events = new ArrayList<>();
    new JsonArray(get(base + "/api/v1/tasks/" + id + "/events").body()).forEach(e -> events.add((JsonObject) e));
    return events;
  }

  private static void awaitStatus(JarProcess server, String base, String id, String status) throws Exception {
    server.eventually(Duration.ofSeconds(120), "task " + id + " " + status,
        () -> status.equals(task(base, id).getString("status")));
  }

  @Test
  void aBurstPreemptsAFullFleetAndAFrozenAgentsPreemptionIsForcedByTheWatchdog() throws Exception {
    Database db = TestPostgres.freshDatabase();
    String url = "postgresql://" + db.options().getUser() + ":" + db.options().getPassword() + "@"
        + db.options().getHost() + ":" + db.options().getPort() + "/" + db.options().getDatabase();
    // the agent is frozen for the preempt timeout and up to half of it more; were that set longer than Hazelcast's
    // default 60 s before it drops a silent member, that would not be what this test is about
    Map<String, String> env = Map.of("HETEROFLOW_CLUSTER_NAME", "hf-preempt-" + ProcessHandle.current().pid(),
        "JAVA_TOOL_OPTIONS", "-Dhazelcast.max.no.heartbeat.seconds=600");
    int port = JarProcess.freePort();
    JarProcess server = JarProcess.start(env, "server", "--pg-url", url, "--http-port", String.valueOf(port),
        "--preempt-timeout-seconds", String.valueOf(PREEMPT_TIMEOUT_SECONDS));
    processes.add(server);
    server.eventually(Duration.ofSeconds(90), "the control plane", () -> server.output().contains("control plane is up"));
    Path fleet = Files.createTempFile("preempt-fleet-", ".yaml");
    Files.writeString(fleet, "nodes:\n" + "  - { id: pm-1, vendor: nvidia, model: A100, cards: 2 }\n"
        + "  - { id: pm-2, vendor: nvidia, model: A100, cards: 2 }\n"
        + "  - { id: pm-3, vendor: nvidia, model: A100, cards: 2 }\n");
    agent = JarProcess.start(env, "agent", "--simulate", fleet.toString());
    processes.add(agent);
    String base = "http://localhost:" + port;
    server.eventually(Duration.ofSeconds(60), "three nodes online", () -> json(get(base + "/api/v1/nodes"))
        .getJsonArray("items").stream().filter(n -> "online".equals(((JsonObject) n).getString("status"))).count() == 3);

    // a full fleet of preemptible one-card jobs, then three two-card tasks of high priority
    List<String> victims = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      victims.add(submit(base, "victim-" + i, 10, true, 1, "sleep 4"));
    }
    for (String victim : victims) {
      awaitStatus(server, base, victim, "running");
    }
    List<String> urgent = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      urgent.add(submit(base, "urgent-" + i, 90, false, 2, "sleep 1"));
    }
    for (String id : urgent) {
      awaitStatus(server, base, id, "succeeded");
    }
    for (String victim : victims) {
      awaitStatus(server, base, victim, "succeeded");
      assertEquals(1, task(base, victim).getInteger("preempt_count"), task(base, victim).encode());
    }
    assertNoCardHeldTwice(server, db);

    // every node held by a two-card job; the agent frozen; one more urgent task
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(submit(base, "held-" + i, 10, true, 2, "exec sleep 600"));
    }
    for (String id : held) {
      awaitStatus(server, base, id, "running");
    }
    signal(agent, "STOP");
    String late = submit(base, "late", 90, false, 2, "sleep 1");
    String[] victim = new String[1];
    server.eventually(Duration.ofSeconds(30), "a victim preempting", () -> held.stream()
        .filter(id -> "preempting".equals(task(base, id).getString("status"))).peek(id -> victim[0] = id).count() == 1);
    server.eventually(Duration.ofSeconds(120), "the watchdog to force it back to the queue",
        () -> !"preempting".equals(task(base, victim[0]).getString("status")));
    List<JsonObject> settled = events(base, victim[0]).stream()
        .filter(e -> "preempting".equals(e.getString("from")) && "pending".equals(e.getString("to"))).toList();
    assertEquals(1, settled.size(), events(base, victim[0]).toString());
    assertEquals("PreemptionForced", settled.get(0).getString("code"));
    OffsetDateTime preempting = events(base, victim[0]).stream().filter(e -> "preempting".equals(e.getString("to")))
        .map(e -> OffsetDateTime.parse(e.getString("at"))).findFirst().orElseThrow();
    long waited = Duration.between(preempting, OffsetDateTime.parse(settled.get(0).getString("at"))).toSeconds();
    // not before the timeout, and within it plus one period (half of it) and 5 s for a slow sweep
    long period = PreemptWatchdogVerticle.periodMs(PREEMPT_TIMEOUT_SECONDS);
    assertTrue(waited >= PREEMPT_TIMEOUT_SECONDS && waited <= PREEMPT_TIMEOUT_SECONDS + period / 1000 + 1 + 5,
        "forced after " + waited + " s (" + PREEMPT_TIMEOUT_SECONDS + " s, swept every " + period + " ms)");

    signal(agent, "CONT");
    awaitStatus(server, base, late, "succeeded");
    Thread.sleep(3000); // the thawed agent's report of the old run (told to stop it) has arrived by now
    assertEquals(1, events(base, victim[0]).stream().filter(e -> "preempting".equals(e.getString("from"))).count(),
        "the thawed agent's confirmation settled nothing: " + events(base, victim[0]));
    assertTrue(events(base, victim[0]).stream().noneMatch(e -> "Preempted".equals(e.getString("code"))));
    assertNoCardHeldTwice(server, db);
    for (String id : held) {
      post(base + "/api/v1/tasks/" + id + "/stop", "");
    }
  }

  /** The allocation history: no two whole-card allocations of one card overlap in time. */
  private static void assertNoCardHeldTwice(JarProcess server, Database db) throws Exception {
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      Pool pool = PgBuilder.pool().connectingTo(db.options()).using(vertx).build();
      List<Row> rows = new ArrayList<>();
      pool.query("SELECT a.node_id, a.gpu_index, a.task_id, a.allocated_at, a.released_at, b.task_id AS other"
          + " FROM allocations a JOIN allocations b ON a.node_id = b.node_id AND a.gpu_index = b.gpu_index"
          + " AND a.id < b.id AND a.kind = 'whole' AND b.kind = 'whole'"
          + " AND b.allocated_at < coalesce(a.released_at, 'infinity') AND a.allocated_at < coalesce(b.released_at,"
          + " 'infinity')").execute().await(30, TimeUnit.SECONDS).forEach(rows::add);
      assertEquals(List.of(), rows.stream().map(row -> row.getString("node_id") + "/" + row.getInteger("gpu_index")
          + " held by " + row.getUUID("task_id") + " and " + row.getUUID("other")).toList());
      pool.close();
    } finally {
      vertx.close();
    }
  }
}
