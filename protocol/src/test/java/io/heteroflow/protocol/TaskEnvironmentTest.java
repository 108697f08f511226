package io.heteroflow.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The one list of variables a task may not set in its env, and the host allow-list. */
class TaskEnvironmentTest {
  static Stream<Arguments> names() {
    return Stream.of(
        // every vendor's visibility variable
        reserved("MUSA_VISIBLE_DEVICES"), reserved("HIP_VISIBLE_DEVICES"), reserved("MLU_VISIBLE_DEVICES"),
        reserved("SUPA_VISIBLE_DEVICES"), reserved("ASCEND_RT_VISIBLE_DEVICES"), reserved("XPU_VISIBLE_DEVICES"),
        reserved("CUDA_VISIBLE_DEVICES"), reserved("TOPS_VISIBLE_DEVICES"),
        // other variables that select, order or limit devices
        reserved("MTHREADS_VISIBLE_DEVICES"), reserved("ROCR_VISIBLE_DEVICES"), reserved("GPU_DEVICE_ORDINAL"),
        reserved("NVIDIA_VISIBLE_DEVICES"), reserved("ASCEND_VISIBLE_DEVICES"), reserved("CUDA_DEVICE_ORDER"),
        reserved("CUDA_MPS_PIPE_DIRECTORY"), reserved("CUDA_MPS_LOG_DIRECTORY"),
        reserved("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), reserved("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        reserved("CUDA_MPS_ENABLE_PER_CTX_DEVICE_MULTIPROCESSOR_PARTITIONING"),
        // code loaded into every process
        reserved("LD_PRELOAD"), reserved("LD_LIBRARY_PATH"), reserved("LD_AUDIT"),
        // what HeteroFlow injects, including distributed training (torchrun)
        reserved("MASTER_ADDR"), reserved("MASTER_PORT"), reserved("WORLD_SIZE"), reserved("RANK"),
        reserved("LOCAL_RANK"), reserved("LOCAL_WORLD_SIZE"), reserved("NNODES"), reserved("NODE_RANK"),
        reserved("GROUP_RANK"), reserved("PET_NPROC_PER_NODE"), reserved("PORT"), reserved("HOME"),
        reserved("TMPDIR"), reserved("HETEROFLOW_TASK_ID"), reserved("HETEROFLOW_GPU_MEMORY_LIMIT_MB"),
        reserved("HETEROFLOW_ADMIN_TOKEN"),
        // a task's own business, including near misses of the prefixes and names
        allowed("PATH"), allowed("LANG"), allowed("TZ"), allowed("PYTHONPATH"), allowed("NCCL_DEBUG"),
        allowed("OMP_NUM_THREADS"), allowed("LOCALE"), allowed("MASTER"), allowed("CUDA_MPS"),
        allowed("HETEROFLOW"), allowed("RANKS"), allowed("MY_RANK"), allowed("PORTS"), allowed("HOMEDIR"),
        allowed("CUDA_LAUNCH_BLOCKING"), allowed("LD_BIND_NOW"), allowed("cuda_visible_devices"));
  }

  private static Arguments reserved(String name) {
    return Arguments.of(name, true);
  }

  private static Arguments allowed(String name) {
    return Arguments.of(name, false);
  }

  @ParameterizedTest(name = "{0} reserved: {1}")
  @MethodSource("names")
  void theListDecides(String name, boolean reserved) {
    assertEquals(reserved, TaskEnvironment.isReserved(name), name);
    assertEquals(reserved, TaskEnvironment.whyReserved(name).isPresent(), name);
  }

  @Test
  void everyVendorsVisibilityVariableAndEveryShardLimitIsReserved() {
    Arrays.stream(GpuVendor.values()).forEach(vendor ->
        assertTrue(TaskEnvironment.isReserved(vendor.visibilityVariable()), vendor.name()));
    for (String qos : List.of(ShardQos.MPS, ShardQos.SOFT)) {
      ShardQos.environment(qos, 4096, 25).keySet().forEach(name ->
          assertTrue(TaskEnvironment.isReserved(name), qos + ": " + name));
    }
  }

  @Test
  void onlyTheAllowListIsTakenFromTheHost() {
    Map<String, String> host = Map.of("PATH", "/usr/bin:/bin", "TZ", "UTC", "HOME", "/root",
        "HETEROFLOW_ADMIN_TOKEN", "secret", "HETEROFLOW_PG_URL", "postgresql://u:p@db/hf", "LD_LIBRARY_PATH", "/x");
    assertEquals(Map.of("PATH", "/usr/bin:/bin", "TZ", "UTC"), TaskEnvironment.fromHost(host));
    TaskEnvironment.FROM_HOST.forEach(name -> assertFalse(TaskEnvironment.isReserved(name), name));
  }
}
