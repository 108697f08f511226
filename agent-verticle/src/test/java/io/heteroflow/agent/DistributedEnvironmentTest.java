package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.TaskEnvironment;
import io.heteroflow.protocol.message.Run;
import io.heteroflow.protocol.message.Shard;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The torch.distributed variables of a single run and of a group member, every one of them. */
class DistributedEnvironmentTest {
  private static final UUID TASK = UUID.randomUUID();
  private static final UUID GROUP = UUID.fromString("3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a98");

  private static NodeReading node(GpuVendor vendor, String... internalIps) {
    return new SimulatedNode("n-1", vendor, "card", 8, 32768, 16, 128, 5, 4096, null, null, null, null,
        List.of(internalIps), List.of("203.0.113.7"), null).read();
  }

  private static Run run(List<Integer> cards, Shard shard, Integer masterPort, Run.Distributed distributed) {
    return new Run(TASK, 1, 0, "t", null, List.of("true"), Map.of(), cards, shard, null, masterPort, 60, 10, null,
        distributed);
  }

  @Test
  void aSingleRunIsAWorldOfOneOnItsNodesFirstAddressWithoutThePrefix() {
    Map<String, String> env = DistributedEnvironment.of(run(List.of(0, 1, 2, 3), null, 29503, null),
        node(GpuVendor.ASCEND, "10.0.1.5/24", "192.168.0.9/16"), AgentVerticle.MASTER_PORT);
    assertEquals(Map.of("MASTER_ADDR", "10.0.1.5", "MASTER_PORT", "29503", "WORLD_SIZE", "1", "RANK", "0",
        "NNODES", "1", "NODE_RANK", "0", "LOCAL_WORLD_SIZE", "4", "HETEROFLOW_DIST_BACKEND", "hccl"), env);
  }

  @Test
  void aSingleRunWithoutCardsOrMasterPortUsesGlooAndTheDefaultPort() {
    Map<String, String> env = DistributedEnvironment.of(run(List.of(), null, null, null),
        node(GpuVendor.NVIDIA, "10.0.1.5"), AgentVerticle.MASTER_PORT);
    assertEquals(Map.of("MASTER_ADDR", "10.0.1.5", "MASTER_PORT", "29500", "WORLD_SIZE", "1", "RANK", "0",
        "NNODES", "1", "NODE_RANK", "0", "LOCAL_WORLD_SIZE", "1", "HETEROFLOW_DIST_BACKEND", "gloo"), env);
  }

  @Test
  void aShardIsOneLocalProcessOnItsVendorsBackend() {
    Map<String, String> env = DistributedEnvironment.of(run(List.of(), new Shard(3, 8192, 25, "soft"), 29501, null),
        node(GpuVendor.CAMBRICON, "fd00:0:0:1::5/64"), AgentVerticle.MASTER_PORT);
    assertEquals("1", env.get("LOCAL_WORLD_SIZE"));
    assertEquals("cncl", env.get("HETEROFLOW_DIST_BACKEND"));
    assertEquals("fd00:0:0:1::5", env.get("MASTER_ADDR"));
  }

  @Test
  void aNodeWithoutAddressesIsItsLoopback() {
    Map<String, String> env = DistributedEnvironment.of(run(List.of(0), null, 29500, null),
        new SimulatedNode("n-0", GpuVendor.MUSA, "card", 1, 32768, 16, 128, 5, 4096, null, null, null, null, null,
            null).read(), AgentVerticle.MASTER_PORT);
    assertEquals("127.0.0.1", env.get("MASTER_ADDR"));
    assertEquals("mccl", env.get("HETEROFLOW_DIST_BACKEND"));
  }

  @Test
  void aGroupMemberTakesItsPlaceFromTheRun() {
    Run.Distributed group = new Run.Distributed(GROUP, 4, 2, "10.0.9.1", 29507, "gloo");
    Map<String, String> env = DistributedEnvironment.of(run(List.of(4, 5, 6, 7, 0, 1, 2, 3), null, 29501, group),
        node(GpuVendor.NVIDIA, "10.0.1.5/24"), AgentVerticle.MASTER_PORT);
    assertEquals(Map.of("MASTER_ADDR", "10.0.9.1", "MASTER_PORT", "29507", "WORLD_SIZE", "4", "RANK", "2",
        "NNODES", "4", "NODE_RANK", "2", "LOCAL_WORLD_SIZE", "8", "HETEROFLOW_DIST_BACKEND", "gloo",
        "HETEROFLOW_GROUP_ID", GROUP.toString()), env);
  }

  @Test
  void rankZeroOfAGroupWithoutCardsIsStillOneLocalProcess() {
    Run.Distributed group = new Run.Distributed(GROUP, 2, 0, "10.0.1.5", 29500, "nccl");
    Map<String, String> env = DistributedEnvironment.of(run(List.of(), null, 29500, group),
        node(GpuVendor.NVIDIA, "10.0.1.5/24"), AgentVerticle.MASTER_PORT);
    assertEquals("0", env.get("RANK"));
    assertEquals("0", env.get("NODE_RANK"));
    assertEquals("1", env.get("LOCAL_WORLD_SIZE"));
    assertEquals("nccl", env.get("HETEROFLOW_DIST_BACKEND"), "the group's choice, not the node's");
  }

  @Test
  void everyNameIsReservedSoNoTaskSetsItItself() {
    DistributedEnvironment.NAMES.forEach(name -> assertTrue(TaskEnvironment.isReserved(name), name));
  }
}
