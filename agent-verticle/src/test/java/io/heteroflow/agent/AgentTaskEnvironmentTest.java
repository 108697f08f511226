package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A whole agent (real process executor) given a run over its transport, as the control plane would send it:
 * the task's process sees the host allow-list, its private HOME/TMPDIR, what the agent injects (MASTER_ADDR
 * without the node address's prefix, the distributed-training variables of a world of one) and the
 * task's own variables, and nothing else: no agent secret (set for this JVM by surefire), and no reserved
 * name that a task stored before the control plane refused it still carries.
 */
class AgentTaskEnvironmentTest {
  private Vertx vertx;

  @AfterEach
  void close() {
    vertx.close().await();
  }

  @Test
  void theTaskSeesExactlyAllowListInjectedAndOwnVariables() throws Exception {
    vertx = Vertx.vertx();
    Path logs = Files.createTempDirectory("agent-env-test");
    SimulatedNode node = new SimulatedNode("n-env", GpuVendor.NVIDIA, "H100", 4, 81920, 8, 64, 5, 1024, null, null,
        null, null, java.util.List.of("10.1.2.3/24"), java.util.List.of("203.0.113.7"), null);
    String taskId = java.util.UUID.randomUUID().toString();
    JsonObject run = new JsonObject().put("task_id", taskId).put("term", 1L)
        .put("command", new JsonArray().add("env"))
        .put("env", new JsonObject().put("GREETING", "hi").put("LD_PRELOAD", "/tmp/evil.so")
            .put("CUDA_VISIBLE_DEVICES", "0,1,2,3").put("HETEROFLOW_ADMIN_TOKEN", "forged"))
        .put("gpu_indices", new JsonArray().add(2)).put("timeout_seconds", 60);
    ScriptedControlPlane controlPlane = new ScriptedControlPlane(run);
    ProcessExecutor executor = new ProcessExecutor(vertx, logs.resolve("n-env"), 2, Duration.ofSeconds(1));
    vertx.deployVerticle(new AgentVerticle(node, executor, 200, controlPlane)).await();

    JsonObject report = controlPlane.report.future().await(30, TimeUnit.SECONDS);
    assertEquals("succeeded", report.getString("outcome"), report.encodePrettily());
    Map<String, String> seen = new TreeMap<>();
    report.getString("log_tail").lines().forEach(line -> seen.put(line.split("=", 2)[0],
        line.contains("=") ? line.split("=", 2)[1] : "(not a variable)"));
    Path work = logs.resolve("n-env").resolve("work").resolve(taskId);
    Map<String, String> expected = new TreeMap<>(Map.of(
        "PATH", System.getenv("PATH"), "LANG", "C.UTF-8", "TZ", "UTC",
        "HOME", work.resolve("home").toString(), "TMPDIR", work.resolve("tmp").toString(),
        "GREETING", "hi", "CUDA_VISIBLE_DEVICES", "2", "HETEROFLOW_TASK_ID", taskId, "HETEROFLOW_NODE_ID", "n-env",
        "MASTER_ADDR", "10.1.2.3"));
    expected.putAll(Map.of("MASTER_PORT", String.valueOf(AgentVerticle.MASTER_PORT), "WORLD_SIZE", "1", "RANK", "0",
        "NNODES", "1", "NODE_RANK", "0", "LOCAL_WORLD_SIZE", "1", "HETEROFLOW_DIST_BACKEND", "nccl"));
    assertEquals(expected, seen);
    for (String secret : new String[] {"HETEROFLOW_ADMIN_TOKEN", "HETEROFLOW_PG_URL"}) {
      assertTrue(System.getenv(secret) != null, secret + " is set for this JVM (surefire)");
      assertFalse(report.getString("log_tail").contains(System.getenv(secret)), secret + " leaked");
    }
  }
}
