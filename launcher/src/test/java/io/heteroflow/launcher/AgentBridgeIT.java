package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A simulated fleet over the agent bridge with the real jars: two control planes (Hazelcast members on one
 * PostgreSQL), each serving the bridge; {@value #NODES} agents in one JVM, each with its own connection and certificate.
 * A control plane killed with -9: every agent reconnects to the survivor and no node goes offline. Then the heartbeat
 * storm: the whole fleet killed and restarted at once, every node back online, tasks lost with it settled.
 */
class AgentBridgeIT {
  /** Enough connections that a reconnect stampede would show (the 5,000-agent figures are the benchmark's). */
  static final int NODES = 200;
  private final List<JarProcess> started = new ArrayList<>();

  @AfterEach
  void stop() {
    started.forEach(JarProcess::close);
  }

  private JarProcess start(Map<String, String> env, String... args) throws Exception {
    JarProcess process = JarProcess.start(env, args);
    started.add(process);
    return process;
  }

  private static List<JsonObject> nodes(String base) {
    List<JsonObject> nodes = new ArrayList<>();
    json(get(base + "/api/v1/nodes")).getJsonArray("items").forEach(node -> nodes.add((JsonObject) node));
    return nodes;
  }

  private static long online(String base) {
    return nodes(base).stream().filter(node -> "online".equals(node.getString("status"))).count();
  }

  private static double connections(String base) {
    return get(base + "/metrics").body().lines().filter(line -> line.startsWith("heteroflow_agent_bridge_connections "))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.indexOf(' ') + 1))).sum();
  }

  @Test
  void aFleetFailsOverToTheSurvivingControlPlaneAndSurvivesRestartingAtOnce() throws Exception {
    Database db = TestPostgres.freshDatabase();
    String url = "postgresql://" + db.options().getUser() + ":" + db.options().getPassword() + "@"
        + db.options().getHost() + ":" + db.options().getPort() + "/" + db.options().getDatabase();
    Path certs = Files.createTempDirectory("hf-it-bridge-").resolve("certs");
    CertsCommand.init(certs, false);
    List<JarProcess> servers = new ArrayList<>();
    List<String> bases = new ArrayList<>();
    List<String> bridges = new ArrayList<>();
    for (String member : List.of("cp-1", "cp-2")) {
      CertsCommand.issue(certs, member, PeerIdentity.MEMBER, List.of("127.0.0.1"), Duration.ofDays(1), false);
      int http = JarProcess.freePort();
      int bridge = JarProcess.freePort();
      servers.add(start(Map.of(), "server", "--pg-url", url, "--http-port", String.valueOf(http), "--certs-dir",
          certs.toString(), "--member-name", member, "--agent-bridge-port", String.valueOf(bridge),
          "--agent-bridge-host", "127.0.0.1", "--cluster-members", "127.0.0.1"));
      bases.add("http://localhost:" + http);
      bridges.add("127.0.0.1:" + bridge);
    }
    for (JarProcess server : servers) {
      server.eventually(Duration.ofSeconds(90), "a control plane", () -> server.output().contains("Agent bridge: "));
    }
    Path node = Files.createTempFile("fleet-node-", ".yaml");
    Files.writeString(node, "id: it-fleet\nvendor: nvidia\nmodel: A100\ncards: 2\ncard_memory_mb: 40960\n");
    String[] fleetArgs = {"agent", "--simulate-fleet", node.toString(), "--count", String.valueOf(NODES),
        "--control-plane", String.join(",", bridges), "--certs-dir", certs.toString()};
    JarProcess fleet = start(Map.of(), fleetArgs);
    String first = bases.get(0);
    fleet.eventually(Duration.ofSeconds(120), "all " + NODES + " nodes online", () -> online(first) == NODES);
    assertEquals(NODES, connections(bases.get(0)) + connections(bases.get(1)), "one connection per agent");

    List<String> tasks = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      tasks.add(json(post(first + "/api/v1/tasks", "{\"name\":\"bridged-" + i + "\",\"command\":[\"sh\",\"-c\","
          + "\"sleep 4\"],\"gpu_required\":1}")).getString("id"));
    }
    fleet.eventually(Duration.ofSeconds(60), "the tasks running", () -> tasks.stream().allMatch(id ->
        !"pending".equals(json(get(first + "/api/v1/tasks/" + id)).getString("status"))));

    // kill -9 the control plane with the most connections: its agents reconnect to the survivor
    int victim = connections(bases.get(0)) >= connections(bases.get(1)) ? 0 : 1;
    String survivor = bases.get(1 - victim);
    double moved = connections(bases.get(victim));
    assertTrue(moved > 0, "the killed control plane served agents");
    long killed = System.nanoTime();
    servers.get(victim).process.destroyForcibly();
    AtomicInteger leastOnline = new AtomicInteger(NODES);
    servers.get(1 - victim).eventually(Duration.ofSeconds(30), "every agent reconnected to the survivor", () -> {
      leastOnline.set((int) Math.min(leastOnline.get(), online(survivor)));
      return connections(survivor) == NODES;
    });
    double reconnectSeconds = (System.nanoTime() - killed) / 1e9;
    System.out.printf("AgentBridgeIT: %.0f agents reconnected to the survivor in %.1f s%n", moved, reconnectSeconds);
    // until the 15 s offline grace of the last heartbeat before the kill has passed, and one 5 s sweep after it
    long until = killed + Duration.ofSeconds(21).toNanos();
    while (System.nanoTime() < until) {
      leastOnline.set((int) Math.min(leastOnline.get(), online(survivor)));
      Thread.sleep(500);
    }
    assertEquals(NODES, leastOnline.get(), "no node was marked offline by the failover");
    servers.get(1 - victim).eventually(Duration.ofSeconds(60), "every task settled across the failover", () ->
        tasks.stream().allMatch(id -> "succeeded".equals(json(get(survivor + "/api/v1/tasks/" + id)).getString("status"))));

    // the heartbeat storm: the whole fleet dies and comes back at once
    List<String> lost = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      lost.add(json(post(survivor + "/api/v1/tasks", "{\"name\":\"storm-" + i + "\",\"command\":[\"sh\",\"-c\","
          + "\"sleep 600\"],\"gpu_required\":1}")).getString("id"));
    }
    servers.get(1 - victim).eventually(Duration.ofSeconds(60), "the long tasks running", () -> lost.stream()
        .allMatch(id -> "running".equals(json(get(survivor + "/api/v1/tasks/" + id)).getString("status"))));
    fleet.process.destroyForcibly();
    fleet.process.waitFor();
    JarProcess again = start(Map.of(), fleetArgs);
    again.eventually(Duration.ofSeconds(120), "every restarted agent connected and its node online", () ->
        connections(survivor) == NODES && online(survivor) == NODES);
    again.eventually(Duration.ofSeconds(60), "the tasks lost with the old agents settled as AgentRestarted", () ->
        lost.stream().allMatch(id -> {
          JsonObject task = json(get(survivor + "/api/v1/tasks/" + id));
          return "failed".equals(task.getString("status"))
              && "AgentRestarted".equals(task.getJsonObject("reason").getString("code"));
        }));
    String after = json(post(survivor + "/api/v1/tasks", "{\"name\":\"after-storm\",\"command\":[\"true\"],"
        + "\"gpu_required\":2}")).getString("id");
    again.eventually(Duration.ofSeconds(60), "new work runs after the storm",
        () -> "succeeded".equals(json(get(survivor + "/api/v1/tasks/" + after)).getString("status")));
    for (JsonObject each : nodes(survivor)) {
      assertEquals(0, each.getInteger("gpu_used"), each.getString("id") + ": every card free again");
    }
  }
}
