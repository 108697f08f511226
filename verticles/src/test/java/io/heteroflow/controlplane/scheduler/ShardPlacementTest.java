package io.heteroflow.controlplane.scheduler;

import static io.heteroflow.controlplane.scheduler.Fixtures.groups;
import static io.heteroflow.controlplane.scheduler.Fixtures.node;
import static io.heteroflow.controlplane.scheduler.Fixtures.task;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.scheduler.plugins.ShardPlacement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Fractional shards (SPEC §3) and the cross-tenant boundary (SPEC §5) in the plain-Java pipeline. */
class ShardPlacementTest {
  private static final PluginSet DEFAULTS = BuiltInPlugins.registry(Fixtures.CONFIG).build(Map.of());
  private static final ShardPlacement SHARDS = new ShardPlacement(Fixtures.CONFIG);

  private static Decision decide(NodeInfo node, TenantBoundary boundary, String tenant, long memoryMb) {
    return BuiltInPlugins.pipeline(Fixtures.CONFIG)
        .decide(task().tenant(tenant).shard(memoryMb).build(), new Snapshot(List.of(node), boundary), DEFAULTS);
  }

  @Test
  void reserveIsTheLargerOf500MbAnd10Percent() {
    assertEquals(8192, Fixtures.CONFIG.reserveMb(81920));
    assertEquals(500, Fixtures.CONFIG.reserveMb(4096));
  }

  @Test
  void aShardGetsOneCardWithItsLimitsAndTheHardwaresQos() {
    Decision decision = decide(node("nv").cards(2, "A100").build(), TenantBoundary.ISOLATED, "a", 20480);
    assertTrue(decision.isPlaced());
    assertEquals(List.of(), decision.gpuIndices());
    assertEquals(20480, decision.shard().memoryMb());
    assertEquals(25, decision.shard().computePercent());
    assertEquals("mps", decision.shard().qos());
    Decision ascend = decide(node("asc").vendor("ascend").cards(2, "910B").build(), TenantBoundary.ISOLATED, "a", 1024);
    assertEquals("soft", ascend.shard().qos());
  }

  @Test
  void shardsStackBestFitAndNeverPastCapacity() {
    // capacity per card: 81920 - 8192 = 73728 MB
    NodeInfo node = node("nv").cards(2, "A100").shard(1, "a", 60000).build();
    assertEquals(1, decide(node, TenantBoundary.ISOLATED, "a", 10000).shard().cardIndex(), "the fuller card that fits");
    assertEquals(0, decide(node, TenantBoundary.ISOLATED, "a", 20000).shard().cardIndex());
    Decision tooBig = decide(node, TenantBoundary.ISOLATED, "a", 73729);
    assertFalse(tooBig.isPlaced());
    assertEquals("InsufficientResources", tooBig.code().name());
  }

  @Test
  void aShardNeverLandsOnAWholeCardTaskNorTheReverse() {
    NodeInfo node = node("nv").cards(2, "A100").busyCards(0).shard(1, "a", 1000).build();
    assertFalse(decide(node, TenantBoundary.ISOLATED, "b", 1000).isPlaced());
    Decision whole = BuiltInPlugins.pipeline(Fixtures.CONFIG)
        .decide(task().tenant("a").gpus(1).build(), new Snapshot(List.of(node)), DEFAULTS);
    assertEquals("InsufficientResources", whole.code().name());
  }

  @Test
  void otherTenantsCardsAreOffLimitsWithoutAShareGroup() {
    NodeInfo node = node("nv").cards(1, "A100").shard(0, "alice", 1000).build();
    Decision refused = decide(node, TenantBoundary.ISOLATED, "bob", 1000);
    assertEquals("NoTenantEligibleGPU", refused.code().name());
    assertEquals("0/1 nodes are available: 1 with room only on other tenants' cards.", refused.message());
    assertTrue(decide(node, groups("lab:alice,bob"), "bob", 1000).isPlaced());
    assertTrue(decide(node, TenantBoundary.ISOLATED, "alice", 1000).isPlaced(), "same tenant always shares");
  }

  @Test
  void theBoundaryIsNeverTransitive() {
    // alice and bob share "lab", bob and carol share "ops": carol may not join a card alice is on
    TenantBoundary boundary = groups("lab:alice,bob", "ops:bob,carol");
    NodeInfo aliceAndBob = node("nv").cards(1, "A100").shard(0, "alice", 1000).shard(0, "bob", 1000).build();
    assertEquals("NoTenantEligibleGPU", decide(aliceAndBob, boundary, "carol", 1000).code().name());
    NodeInfo bobOnly = node("nv").cards(1, "A100").shard(0, "bob", 1000).build();
    assertTrue(decide(bobOnly, boundary, "carol", 1000).isPlaced());
    assertFalse(boundary.mayShare("carol", "unknown-tenant"), "a failed lookup is not allowed");
  }

  @Test
  void tenantRuleWinsTheReasonOnlyWhenItAloneBlocks() {
    NodeInfo full = node("full").cards(1, "A100").shard(0, "bob", 73000).build();
    NodeInfo foreign = node("foreign").cards(1, "A100").shard(0, "alice", 1000).build();
    Decision decision = BuiltInPlugins.pipeline(Fixtures.CONFIG).decide(task().tenant("bob").shard(2000).build(),
        new Snapshot(List.of(full, foreign), TenantBoundary.ISOLATED), DEFAULTS);
    assertEquals("NoTenantEligibleGPU", decision.code().name());
    assertEquals(ShardPlacement.Fit.NO_CARD_FITS,
        SHARDS.check(task().tenant("bob").shard(2000).build(), full, TenantBoundary.ISOLATED));
  }
}
