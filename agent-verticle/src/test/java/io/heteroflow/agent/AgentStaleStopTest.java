package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A stop that reaches the agent after the task's process ended (its report on the way) is already answered: it
 * must not be kept for the task's next run on this node. Seen end to end: a preempted task bound back to the same
 * node was stopped "before it started" by the heartbeat's repeat of the preemption's stop, and failed.
 */
class AgentStaleStopTest {
  private static final String NODE = "n-stale";
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static JsonObject run(UUID task, int attempt) {
    return new JsonObject().put("v", 1).put("task_id", task.toString()).put("term", 1L).put("attempt", attempt)
        .put("command", new JsonArray().add("sh").add("-c").add("echo run " + attempt))
        .put("gpu_indices", new JsonArray().add(0));
  }

  @Test
  void aStopForARunThatEndedDoesNotStopTheNextRunOfTheTask() throws Exception {
    UUID task = UUID.randomUUID();
    ScriptedControlPlane controlPlane = new ScriptedControlPlane(run(task, 0));
    Promise<JsonObject> firstAnswer = Promise.promise();
    List<JsonObject> reports = new CopyOnWriteArrayList<>();
    controlPlane.reports = body -> {
      reports.add(body);
      return reports.size() == 1 ? firstAnswer.future()
          : Future.succeededFuture(new JsonObject().put("v", 1).put("settled", true));
    };
    SimulatedNode node = new SimulatedNode(NODE, GpuVendor.NVIDIA, "H100", 1, 81920, 8, 64, 5, 1024, null, null,
        null, null, List.of("127.0.0.1"), null);
    vertx.deployVerticle(new AgentVerticle(node, new ProcessExecutor(vertx, Files.createTempDirectory("agent-stale"),
        2, Duration.ofSeconds(1)), 100, controlPlane)).await();
    await(() -> reports.size() == 1, "the first run's report");

    // the preemption's stop, repeated after the process has already ended, while its report is unanswered
    vertx.runOnContext(v -> controlPlane.handlers.get(BusAddresses.agentStop(NODE)).accept(new Stop(task).toJson()));
    vertx.timer(100).await();
    firstAnswer.complete(new JsonObject().put("v", 1).put("settled", true));
    vertx.timer(100).await();
    // the task, back in the queue, is bound to this node again
    vertx.runOnContext(v -> controlPlane.handlers.get(BusAddresses.agentRun(NODE)).accept(run(task, 1)));
    await(() -> reports.size() == 2, "the second run's report");
    assertEquals("succeeded", reports.get(1).getString("outcome"), reports.get(1).encode());
    assertEquals(1, reports.get(1).getInteger("attempt"));
    assertEquals(0, reports.get(0).getInteger("attempt"));
  }

  private void await(java.util.function.BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      vertx.timer(20).await();
    }
  }
}
