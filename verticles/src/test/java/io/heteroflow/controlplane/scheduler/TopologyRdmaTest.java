package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.CycleState;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plugins.RdmaPlugin;
import io.heteroflow.controlplane.scheduler.plugins.TopologyScore;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** topology (SPEC §4.1) and rdma (SPEC §4.3) as tables. */
class TopologyRdmaTest {
  private static final TopologyScore TOPOLOGY = new TopologyScore();
  private static final RdmaPlugin RDMA = new RdmaPlugin();

  static Stream<Arguments> topology() {
    NodeInfo placed = node("n").location("cn-north-1", "az1", "r01").build();
    return Stream.of(
        Arguments.of("no preference", task().build(), placed, 50),
        Arguments.of("region +5", task().label("region", "cn-north-1").build(), placed, 55),
        Arguments.of("zone +15", task().label("zone", "az1").build(), placed, 65),
        Arguments.of("rack +10", task().label("rack", "r01").build(), placed, 60),
        Arguments.of("all three, max 80", task().label("region", "cn-north-1").label("zone", "az1")
            .label("rack", "r01").build(), placed, 80),
        Arguments.of("mismatch is neutral, never a penalty", task().label("zone", "az9").build(), placed, 50),
        Arguments.of("node without location is neutral", task().label("zone", "az1").build(), node("bare").build(), 50));
  }

  @ParameterizedTest(name = "topology: {0}")
  @MethodSource("topology")
  void topologyScores(String name, TaskRequest task, NodeInfo node, int expected) {
    assertEquals(expected, TOPOLOGY.score(task, node, new CycleState()), name);
  }

  static Stream<Arguments> rdma() {
    return Stream.of(
        Arguments.of("no label", node("n").build(), 50),
        Arguments.of("true without speed", node("n").label("rdma", "true").build(), 70),
        Arguments.of("true at 100 Gbps", node("n").label("rdma", "true").label("rdma-speed", "100").build(), 80),
        Arguments.of("true at 400 Gbps caps at +30", node("n").label("rdma", "true").label("rdma-speed", "400").build(),
            100),
        Arguments.of("unreadable speed is no bonus", node("n").label("rdma", "true").label("rdma-speed", "fast").build(),
            70),
        Arguments.of("explicitly false", node("n").label("rdma", "false").build(), 40));
  }

  @ParameterizedTest(name = "rdma: {0}")
  @MethodSource("rdma")
  void rdmaScores(String name, NodeInfo node, int expected) {
    assertEquals(expected, RDMA.score(task().build(), node, new CycleState()), name);
  }

  @Test
  void rdmaRequiredDropsOnlyExplicitFalse() {
    TaskRequest required = task().label("rdma", "required").build();
    Snapshot none = new Snapshot(List.of());
    assertEquals("RDMAUnavailable", RDMA.filter(required, node("n").label("rdma", "false").build(), none, new CycleState()).code().name());
    assertTrue(RDMA.filter(required, node("n").build(), none, new CycleState()).isOk(), "unknown is not a hard no");
    assertTrue(RDMA.filter(required, node("n").label("rdma", "true").build(), none, new CycleState()).isOk());
    assertTrue(RDMA.filter(task().build(), node("n").label("rdma", "false").build(), none, new CycleState()).isOk());
  }
}
