package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 §6: an agent flapping on and off (kill -9 and restarted at once, three times, with tasks running on it
 * each time). Every task ends (succeeded, or failed AgentRestarted when its agent died under it; never stuck
 * running), no card is booked twice, every card is free at the end and the node is online with its last boot.
 */
class AgentFlappingIT {
  private static final int FLAPS = 3;
  private final List<JarProcess> processes = new ArrayList<>();

  @AfterEach
  void stop() {
    processes.forEach(JarProcess::close);
  }

  @Test
  void anAgentKilledAndRestartedThreeTimesLeavesEveryTaskSettledAndNoCardBookedTwice() throws Exception {
    ItDatabase database = new ItDatabase(TestPostgres.freshDatabase());
    Map<String, String> cluster = Map.of("HETEROFLOW_CLUSTER_NAME", "hf-flap-" + ProcessHandle.current().pid());
    int port = JarProcess.freePort();
    JarProcess server = JarProcess.start(cluster, "server", "--pg-url", database.url(), "--http-port",
        String.valueOf(port));
    processes.add(server);
    String base = "http://localhost:" + port;
    server.eventually(Duration.ofSeconds(90), "a control plane", () -> server.output().contains("control plane is up"));
    Path fleet = Files.createTempFile("fleet-", ".yaml");
    Files.writeString(fleet, "nodes:\n  - { id: flap-1, vendor: nvidia, model: A100, cards: 8, cpu_cores: 64 }\n");
    JarProcess agent = agent(cluster, fleet);
    // each round's boot below is then the one of the agent about to be killed (before, the first round read no
    // boot yet, and every later wait for "the restarted agent" was answered by the boot of the agent killed before)
    server.eventually(Duration.ofSeconds(60), "the agent's first heartbeat", () -> bootOf(database) != null);
    int submitted = 0;
    for (int flap = 0; flap < FLAPS; flap++) {
      String boot = bootOf(database);
      int batch = submitted;
      // 10 s: the agent is killed as soon as one of them runs, so it still runs then (was 30 s, which the tasks
      // started by the last agent then had to sleep out before the end)
      for (int i = 0; i < 4; i++, submitted++) {
        assertEquals(201, post(base + "/api/v1/tasks", "{\"name\":\"flap-" + submitted + "\",\"command\":[\"sleep\","
            + "\"10\"],\"gpu_required\":2}").statusCode());
      }
      server.eventually(Duration.ofSeconds(60), "a task of this round running on the agent", () -> database.count(
          "SELECT count(*) FROM tasks WHERE status = 'running' AND substring(name from 6)::int >= " + batch) >= 1);
      agent.process.destroyForcibly().waitFor();
      agent = agent(cluster, fleet);
      server.eventually(Duration.ofSeconds(60), "the restarted agent's first heartbeat", () -> {
        String now = bootOf(database);
        return now != null && !now.equals(boot);
      });
    }
    for (int i = 0; i < 4; i++, submitted++) {
      assertEquals(201, post(base + "/api/v1/tasks", "{\"name\":\"flap-" + submitted + "\",\"command\":[\"true\"],"
          + "\"gpu_required\":4}").statusCode());
    }
    server.eventually(Duration.ofSeconds(120), "every task to end", () -> database.count(
        "SELECT count(*) FROM tasks WHERE status NOT IN ('succeeded', 'failed', 'stopped')") == 0);
    long lost = database.count("SELECT count(*) FROM tasks WHERE status = 'failed' AND reason_code = 'AgentRestarted'");
    assertTrue(lost >= FLAPS, "each kill took at least one running task with it: " + lost);
    assertEquals(submitted, database.count("SELECT count(*) FROM tasks WHERE status = 'succeeded'") + lost,
        "every task succeeded or was lost with its agent, nothing else");
    assertEquals(4, database.count("SELECT count(*) FROM tasks WHERE spec->'command'->>0 = 'true'"
        + " AND status = 'succeeded'"), "the tasks after the last flap ran");
    assertEquals(0, database.overlappingBookings(), "no card was booked twice at once");
    assertEquals(0, database.count("SELECT coalesce(sum(gpu_used), 0) FROM nodes"), "every card is free");
    JsonObject node = json(get(base + "/api/v1/nodes/flap-1"));
    assertEquals("online", node.getString("status"), node.encode());
  }

  private JarProcess agent(Map<String, String> cluster, Path fleet) throws Exception {
    JarProcess agent = JarProcess.start(cluster, "agent", "--simulate", fleet.toString());
    processes.add(agent);
    return agent;
  }

  private static String bootOf(ItDatabase database) {
    try (var connection = database.connect(); var row = connection.createStatement()
        .executeQuery("SELECT boot_id FROM nodes WHERE id = 'flap-1'")) {
      return row.next() ? row.getString(1) : null;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
