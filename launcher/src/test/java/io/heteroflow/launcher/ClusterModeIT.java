package io.heteroflow.launcher;

import static io.heteroflow.launcher.JarProcess.get;
import static io.heteroflow.launcher.JarProcess.json;
import static io.heteroflow.launcher.JarProcess.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.heteroflow.testsupport.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code heteroflow server} and {@code heteroflow agent} as two JVMs on the clustered (Hazelcast) event bus
 * against a real PostgreSQL: the agent registers, runs a task, and when it is killed the server marks its node
 * offline by the server's own receipt times. The bus is mutual TLS: certificates from {@code heteroflow certs}, given
 * to the server by environment (HETEROFLOW_CERTS_DIR, HETEROFLOW_MEMBER_NAME) and to the agent by flags.
 */
class ClusterModeIT {
  private JarProcess server;
  private JarProcess agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void serverAndAgentTalkOverTheClusteredBus() throws Exception {
    Database db = TestPostgres.freshDatabase();
    String url = "postgresql://" + db.options().getUser() + ":" + db.options().getPassword() + "@"
        + db.options().getHost() + ":" + db.options().getPort() + "/" + db.options().getDatabase();
    Map<String, String> cluster = Map.of("HETEROFLOW_CLUSTER_NAME", "hf-it-" + ProcessHandle.current().pid());
    Path certs = Files.createTempDirectory("hf-it-certs-").resolve("certs");
    CertsCommand.init(certs, false);
    CertsCommand.issue(certs, "cp-1", PeerIdentity.MEMBER, List.of("127.0.0.1"), Duration.ofDays(1), false);
    CertsCommand.issue(certs, "gpu-1", PeerIdentity.AGENT, List.of("127.0.0.1"), Duration.ofDays(1), false);
    Map<String, String> serverEnv = new HashMap<>(cluster);
    serverEnv.put("HETEROFLOW_CERTS_DIR", certs.toString());
    serverEnv.put("HETEROFLOW_MEMBER_NAME", "cp-1");
    int port = JarProcess.freePort();
    server = JarProcess.start(serverEnv, "server", "--pg-url", url, "--http-port", String.valueOf(port));
    server.eventually(Duration.ofSeconds(90), "the control plane", () -> server.output().contains("control plane is up"));
    assertFalse(server.output().contains("unauthenticated"), server.output());

    Path node = Files.createTempFile("node-", ".yaml");
    Files.writeString(node, "id: it-remote-01\nvendor: metax\nmodel: C500\ncards: 4\ncard_memory_mb: 65536\n");
    agent = JarProcess.start(cluster, "agent", "--simulate", node.toString(), "--certs-dir", certs.toString(),
        "--member-name", "gpu-1");
    String base = "http://localhost:" + port;
    server.eventually(Duration.ofSeconds(60), "the agent's node online", () -> "online".equals(
        json(get(base + "/api/v1/nodes/it-remote-01")).getString("status")));

    String id = json(post(base + "/api/v1/tasks", "{\"name\":\"remote\",\"command\":[\"sh\",\"-c\","
        + "\"echo $HETEROFLOW_NODE_ID\"],\"gpu_required\":4,\"gpu_type\":\"metax\"}")).getString("id");
    server.eventually(Duration.ofSeconds(30), "the task to succeed",
        () -> "succeeded".equals(json(get(base + "/api/v1/tasks/" + id)).getString("status")));
    assertEquals("it-remote-01\n", get(base + "/api/v1/tasks/" + id + "/logs").body());

    agent.process.destroyForcibly();
    server.eventually(Duration.ofSeconds(40), "the silent node marked offline", () -> "offline".equals(
        json(get(base + "/api/v1/nodes/it-remote-01")).getString("status")));
    JsonObject view = json(get(base + "/api/v1/nodes/it-remote-01"));
    assertEquals(0, view.getInteger("gpu_used"));
  }
}
