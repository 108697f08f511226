package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Two agent processes started with the same node id, on one control plane and PostgreSQL: the second is refused
 * (node_held) while the first lives, so the first one's running task is not failed as AgentRestarted and the
 * second is handed no work; it takes the node over once the first falls silent past the hold window; and a
 * clean stop releases the node, so a replacement takes it over at once.
 */
class NodeHolderEndToEndTest {
  private static final String NODE = "dup-1";
  private static final Duration WAIT = Duration.ofSeconds(30);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();

  /** One agent process on the node: its executor, the number of heartbeats it has built, its deployment. */
  private record Agent(AgentVerticle verticle, ProcessExecutor executor, AtomicInteger heartbeats, String deployment) {
    boolean ran(String taskId) {
      return executor.logs(taskId, null, 1024, null).found();
    }
  }

  private static Agent start() throws Exception {
    var node = ControlPlaneHarness.node(NODE, GpuVendor.NVIDIA, 2);
    AtomicInteger heartbeats = new AtomicInteger();
    NodeSource counted = new NodeSource() {
      @Override
      public String nodeId() {
        return node.nodeId();
      }

      @Override
      public int cpuCores() {
        return node.cpuCores();
      }

      @Override
      public NodeReading read() {
        heartbeats.incrementAndGet();
        return node.read();
      }
    };
    ProcessExecutor executor = new ProcessExecutor(cp.vertx, Files.createTempDirectory("heteroflow-holder-"), 4,
        Duration.ofSeconds(2));
    AgentVerticle verticle = new AgentVerticle(counted, executor, 300);
    return new Agent(verticle, executor, heartbeats, await(cp.vertx.deployVerticle(verticle)));
  }

  private static Row node() throws Exception {
    return await(cp.pool().preparedQuery("SELECT boot_id, boot_seen_at, released_at FROM nodes WHERE id = $1")
        .execute(Tuple.of(NODE))).iterator().next();
  }

  private static String boot() throws Exception {
    return node().getString("boot_id");
  }

  private static String running(String name) throws Exception {
    String id = cp.submit("{\"name\":\"" + name + "\",\"command\":[\"sleep\",\"600\"],\"gpu_required\":1}");
    cp.awaitStatus(id, "running");
    return id;
  }

  @Test
  void aSecondAgentWithTheSameNodeIdDoesNotFailTheFirstOnesTaskAndTakesOverOnlyOnceItIsGone() throws Exception {
    Agent first = start();
    eventually(WAIT, "the node registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 1);
    String holder = boot();
    String task = running("first-agent");
    assertTrue(first.ran(task));

    Agent second = start();
    eventually(WAIT, "ten heartbeats of the second agent", () -> second.heartbeats().get() >= 10);
    assertEquals("running", cp.get("/api/v1/tasks/" + task).getString("status"),
        "the first agent's task is not failed as AgentRestarted");
    assertEquals(holder, boot(), "the node stays the first agent's");
    String another = running("while-two");
    // running in PostgreSQL once claimed: the holder starts the process as the claim's answer reaches it
    eventually(WAIT, "work goes to the holder", () -> first.ran(another));
    assertFalse(second.ran(another) || second.ran(task), "the refused agent is handed no work");

    first.verticle().crash(); // its host lost power: it falls silent, releasing nothing
    await(cp.vertx.undeploy(first.deployment()));
    long crashed = System.nanoTime();
    JsonObject lost = cp.awaitStatus(task, "failed");
    assertEquals("AgentRestarted", lost.getJsonObject("reason").getString("code"), lost.encode());
    double seconds = (System.nanoTime() - crashed) / 1e9;
    assertTrue(seconds >= 5, "taken over only past the hold window, after " + seconds + " s");
    String taker = boot();
    assertNotEquals(holder, taker, "the second agent holds the node now");

    await(cp.vertx.undeploy(second.deployment())); // a clean stop releases the node
    assertTrue(node().getValue("released_at") != null, "released by the holder");
    long stopped = System.nanoTime();
    Agent third = start();
    eventually(WAIT, "the replacement to take the node over", () -> {
      try {
        return !taker.equals(boot());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    double takeover = (System.nanoTime() - stopped) / 1e9;
    assertTrue(takeover < 4, "a released node is taken over at once, not after the 6 s window: " + takeover + " s");
    assertTrue(node().getValue("released_at") == null, "the new holder's hold is its own");
    await(cp.vertx.undeploy(third.deployment()));
  }
}
