package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFigures.seconds;
import static io.heteroflow.bench.BenchFutures.await;
import static io.heteroflow.bench.BenchFutures.forEachLimited;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Heartbeat;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The simulated fleet: N nodes × 8 cards register the way agents do, through {@code NodeStore.applyHeartbeat},
 * and keep heartbeating (each node once per period, spread over 100 ms ticks) so none goes offline. No agent
 * runs, so bound tasks stay {@code scheduled}.
 */
final class SimulatedFleet {
  private static final int REGISTER_IN_FLIGHT = 32;
  private static final GpuVendor[] VENDORS = {GpuVendor.NVIDIA, GpuVendor.ASCEND, GpuVendor.HYGON, GpuVendor.MUSA};
  private static final long CARD_MB = 81920;

  private final Vertx vertx;
  private final List<String> nodeIds;
  private final long timer;
  private final AtomicLong sent = new AtomicLong();

  /**
   * Registers {@code nodes} nodes, 32 heartbeats in flight ({@code register_seconds} into {@code result}), then
   * starts their heartbeats every {@code heartbeatSeconds} (none when it is 0 or less).
   */
  static SimulatedFleet register(Vertx vertx, ControlPlane.Running controlPlane, int nodes, double heartbeatSeconds,
                                 Consumer<String> log, JsonObject result) throws Exception {
    long registerStart = System.nanoTime();
    AtomicLong sequence = new AtomicLong(1);
    List<String> nodeIds = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      nodeIds.add(String.format("bench-%05d", i));
    }
    await(forEachLimited(nodeIds, REGISTER_IN_FLIGHT,
        id -> controlPlane.stores().nodes().applyHeartbeat(Heartbeat.fromJson(heartbeat(id, sequence.get())))));
    double registerSeconds = seconds(System.nanoTime() - registerStart);
    log.accept(String.format("  %d nodes registered in %.2f s", nodes, registerSeconds));
    result.put("register_seconds", round3(registerSeconds));
    return new SimulatedFleet(vertx, controlPlane, nodeIds, heartbeatSeconds, sequence);
  }

  /** Keeps every node's heartbeat fresh: each node once per period, spread over 100 ms ticks. */
  private SimulatedFleet(Vertx vertx, ControlPlane.Running controlPlane, List<String> nodeIds, double periodSeconds,
                         AtomicLong sequence) {
    this.vertx = vertx;
    this.nodeIds = List.copyOf(nodeIds);
    if (periodSeconds <= 0) {
      timer = -1;
      return;
    }
    int ticks = (int) Math.max(1, Math.round(periodSeconds * 10));
    AtomicInteger tick = new AtomicInteger();
    timer = vertx.setPeriodic(100, id -> {
      int slot = tick.getAndIncrement() % ticks;
      if (slot == 0) {
        sequence.incrementAndGet();
      }
      long seq = sequence.get();
      for (int i = slot; i < nodeIds.size(); i += ticks) {
        sent.incrementAndGet();
        controlPlane.stores().nodes().applyHeartbeat(Heartbeat.fromJson(heartbeat(nodeIds.get(i), seq)));
      }
    });
  }

  /** The agent heartbeat of a simulated node (NodeReading.heartbeat's shape), cards idle and cool. */
  static JsonObject heartbeat(String nodeId, long sequence) {
    int number = Integer.parseInt(nodeId.substring(nodeId.lastIndexOf('-') + 1));
    GpuVendor vendor = VENDORS[number % VENDORS.length];
    JsonArray cards = new JsonArray();
    for (int i = 0; i < BenchScenario.CARDS_PER_NODE; i++) {
      cards.add(new JsonObject().put("index", i).put("uuid", nodeId + "-gpu-" + i).put("model", vendor.id() + "-80g")
          .put("memory_total_mb", CARD_MB).put("memory_used_mb", 0).put("utilization_percent", 0)
          .put("temperature_c", 40).put("numa_node", i < 4 ? 0 : 1));
    }
    return new JsonObject().put("node_id", nodeId).put("boot_id", "bench-boot").put("seq", sequence)
        .put("gpu_vendor", vendor.id()).put("cpu_cores", 128).put("cpu_percent", 5.0)
        .put("memory_total_gb", 1024.0).put("memory_used_mb", 16384).put("cards", cards)
        .put("active_tasks", new JsonArray()).put("internal_ips", new JsonArray().add(internalIp(number)))
        .put("labels", new JsonObject()).put("topology", null)
        .put("location", new JsonObject().put("region", "bench").put("zone", "z" + (number % 4))
            .put("rack", "r" + (number / 40)))
        .put("dedicated_tenant", null);
  }

  /**
   * A node's own address in one 10.0.0.0/8 subnet: one network domain, so a task group's ranks reach rank 0 at its
   * internal address (a bare address would make each node a domain of its own, and two nodes reporting one address
   * would count as two VPCs: the group would need a public address and never bind).
   */
  static String internalIp(int number) {
    int host = number + 1;
    return "10." + (host >> 16 & 255) + "." + (host >> 8 & 255) + "." + (host & 255) + "/8";
  }

  /** The node ids, in registration order. */
  List<String> nodeIds() {
    return nodeIds;
  }

  /** Heartbeats sent by the periodic timer so far (registration not counted). */
  long heartbeatsSent() {
    return sent.get();
  }

  void stopHeartbeats() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }
}
