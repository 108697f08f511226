package io.heteroflow.protocol;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Fractional GPU shards: the QoS level a node's hardware gives (never chosen by the user) and the environment
 * that carries a shard's limits into its process.
 * <ul>
 *   <li>{@code mps} — NVIDIA: memory and compute limits enforced per client by the CUDA MPS server
 *       ({@code CUDA_MPS_PINNED_DEVICE_MEM_LIMIT}, {@code CUDA_MPS_ACTIVE_THREAD_PERCENTAGE});</li>
 *   <li>{@code soft} — other vendors: the limits are passed as HETEROFLOW_* variables for the framework or
 *       the vendor runtime to apply; the scheduler still never oversubscribes a card's memory.</li>
 * </ul>
 */
public final class ShardQos {
  public static final String MPS = "mps";
  public static final String SOFT = "soft";

  private ShardQos() {}

  public static String levelFor(String gpuVendor, String cardModel) {
    return GpuVendor.fromId(gpuVendor).filter(vendor -> vendor == GpuVendor.NVIDIA).isPresent() ? MPS : SOFT;
  }

  /** The variables a shard's process gets, besides the vendor's visibility variable set to its one card. */
  public static Map<String, String> environment(String qos, long memoryMb, int computePercent) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("HETEROFLOW_SHARD_QOS", qos);
    env.put("HETEROFLOW_GPU_MEMORY_LIMIT_MB", String.valueOf(memoryMb));
    env.put("HETEROFLOW_GPU_COMPUTE_PERCENT", String.valueOf(computePercent));
    if (MPS.equals(qos)) {
      // the process sees only its card, as device 0
      env.put("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=" + memoryMb + "M");
      env.put("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", String.valueOf(computePercent));
    }
    return env;
  }
}
