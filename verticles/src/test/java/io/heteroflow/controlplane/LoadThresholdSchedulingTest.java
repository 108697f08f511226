package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The load thresholds are a filter on the snapshot's last heartbeat, not only a bind-time re-check: a task that
 * fits only on a node over its CPU threshold waits with LoadThresholdExceeded and costs one round per tick (a
 * refused bind would ask for another round every 20 ms), and binds once the node's heartbeats show it cooled.
 */
class LoadThresholdSchedulingTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Pattern ROUNDS = Pattern.compile("(?m)^heteroflow_round_duration_seconds_count(?:\\{[^}]*})? (\\S+)$");
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static final HeatedNode NODE = new HeatedNode(ControlPlaneHarness.node("hot-1", GpuVendor.NVIDIA, 2));

  /** A simulated node whose CPU load the test sets; each heartbeat reports the current value. */
  static final class HeatedNode implements NodeSource {
    private final SimulatedNode node;
    volatile double cpuPercent = 97;

    HeatedNode(SimulatedNode node) {
      this.node = node;
    }

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
      NodeReading reading = node.read();
      return new NodeReading(reading.vendor(), reading.cards(), reading.cpuCores(), cpuPercent,
          reading.memoryTotalGb(), reading.memoryUsedMb(), reading.internalIps(), reading.labels(),
          reading.topology(), reading.location(), reading.dedicatedTenant());
    }
  }

  @BeforeAll
  static void start() throws Exception {
    await(cp.vertx.deployVerticle(new AgentVerticle(NODE, new ProcessExecutor(cp.vertx,
        Files.createTempDirectory("heteroflow-test-logs-").resolve(NODE.nodeId()), 4, Duration.ofSeconds(2)), 300)));
    eventually(WAIT, "the node registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 1);
  }

  @Test
  void aTaskThatFitsOnlyOnAHotNodeWaitsOneRoundPerTickAndBindsOnceItCools() throws Exception {
    String id = cp.submit("{\"name\":\"waits\",\"command\":[\"true\"],\"gpu_required\":1}");
    cp.awaitReason(id, "LoadThresholdExceeded");
    double before = rounds();
    Thread.sleep(3000); // a rate needs a window: the 5 s tick gives at most one round in it
    double during = rounds() - before;
    assertTrue(during <= 2, during + " rounds in 3 s for one task that cannot bind");
    JsonObject waiting = cp.get("/api/v1/tasks/" + id);
    assertEquals("pending", waiting.getString("status"));
    assertEquals("0/1 nodes are available: 1 over load thresholds (CPU at or above 90 %).",
        waiting.getJsonObject("reason").getString("message"), "the pipeline's reason, not a refused bind's");

    NODE.cpuPercent = 20;
    JsonObject done = cp.awaitStatus(id, "succeeded");
    assertEquals("hot-1", done.getString("node"));
  }

  private static double rounds() throws Exception {
    Matcher matcher = ROUNDS.matcher(cp.call("GET", "/metrics", null, null).body());
    assertTrue(matcher.find(), "heteroflow_round_duration_seconds_count on /metrics");
    return Double.parseDouble(matcher.group(1));
  }
}
