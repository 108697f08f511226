package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.FailureCode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The agent repeats a claim or a report only when the control plane could not answer it (503, a timeout), never
 * when it refused it (4xx): a refused claim was retried 15 times, a refused report 100 times.
 */
class AgentRetryTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static JsonObject run(String command) {
    return new JsonObject().put("v", 1).put("task_id", UUID.randomUUID().toString()).put("term", 1L)
        .put("command", new JsonArray().add("sh").add("-c").add(command)).put("gpu_indices", new JsonArray().add(0));
  }

  private void deploy(ScriptedControlPlane controlPlane) throws Exception {
    SimulatedNode node = new SimulatedNode("n-retry", GpuVendor.NVIDIA, "H100", 1, 81920, 8, 64, 5, 1024, null, null,
        null, null, List.of("127.0.0.1"), null);
    ProcessExecutor executor = new ProcessExecutor(vertx, Files.createTempDirectory("agent-retry"), 2,
        Duration.ofSeconds(1));
    vertx.deployVerticle(new AgentVerticle(node, executor, 100, controlPlane)).await();
  }

  private void waitMs(long ms) {
    vertx.timer(ms).await();
  }

  @Test
  void aClaimTheControlPlaneRefusedIsNotRepeated() throws Exception {
    ScriptedControlPlane controlPlane = new ScriptedControlPlane(run("true"),
        attempt -> Future.failedFuture(FailureCode.NOT_FOUND.refusal("task_id: no task")));
    deploy(controlPlane);
    waitMs(2500); // repetitions would come after 125–250, 250–500, 500–1000 ms…
    assertEquals(1, controlPlane.claimRequests.get(), "a 404 is the sender's fault: claimed once");
    assertEquals(0, controlPlane.reportRequests.get(), "a task never claimed is never started");
  }

  @Test
  void aClaimTheControlPlaneCouldNotAnswerIsRepeatedAsARetryAndTheTaskRuns() throws Exception {
    JsonObject run = run("echo ran");
    ScriptedControlPlane controlPlane = new ScriptedControlPlane(run, attempt -> attempt < 2
        ? Future.failedFuture(FailureCode.UNAVAILABLE.refusal("PostgreSQL unreachable"))
        : Future.succeededFuture(new JsonObject().put("v", 1).put("claimed", true)));
    deploy(controlPlane);
    JsonObject report = controlPlane.report.future().timeout(20, java.util.concurrent.TimeUnit.SECONDS).await();
    assertEquals("succeeded", report.getString("outcome"));
    assertEquals(3, controlPlane.claimRequests.get(), "two unavailable answers, then granted");
  }

  @Test
  void aReportTheControlPlaneRefusedIsSentOnce() throws Exception {
    ScriptedControlPlane controlPlane = new ScriptedControlPlane(run("true"));
    controlPlane.reports = body -> Future.failedFuture(FailureCode.BAD_REQUEST.refusal("outcome: one of …"));
    deploy(controlPlane);
    controlPlane.report.future().timeout(20, java.util.concurrent.TimeUnit.SECONDS).await();
    waitMs(2000);
    assertEquals(1, controlPlane.reportRequests.get(), "a refused report is given up at once");
  }
}
