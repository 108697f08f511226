package io.heteroflow.protocol;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a task's environment may hold. A task's process starts from an EMPTY environment: only the host
 * variables in {@link #FROM_HOST}, then what HeteroFlow injects, then the task's own {@code env}. The task's
 * own {@code env} may not name a reserved variable: one that selects or limits devices, loads code into
 * every process, or that HeteroFlow injects itself. The control plane refuses such a task at create (400
 * naming {@code env.<NAME>}); the agent drops any that still reaches it (a task stored before a name was
 * reserved). This class is the one list of both; README "API" documents it. The distributed-training
 * variables the agent injects — MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, NNODES, NODE_RANK, LOCAL_WORLD_SIZE,
 * HETEROFLOW_DIST_BACKEND, HETEROFLOW_GROUP_ID — are all reserved (by name, or by the MASTER_, LOCAL_ and
 * HETEROFLOW_ prefixes), as are torchrun's own (GROUP_RANK, LOCAL_RANK, PET_*).
 */
public final class TaskEnvironment {
  private TaskEnvironment() {}

  /** The only variables a task process takes from the agent's host environment (absent ones are skipped). */
  public static final List<String> FROM_HOST = List.of("PATH", "LANG", "TZ");

  /** Per-task directories the agent creates for the task and removes when it ends (process executor). */
  public static final String HOME = "HOME";
  public static final String TMPDIR = "TMPDIR";

  private static final String DEVICES = "selects or limits the task's devices";
  private static final String CODE = "loads code into every process";
  private static final String INJECTED = "is set by HeteroFlow";

  /** Reserved exact names, each with why. */
  private static final Map<String, String> NAMES = names();

  /** Reserved prefixes, each with why. */
  private static final Map<String, String> PREFIXES = Map.of(
      "HETEROFLOW_", INJECTED,
      "MASTER_", INJECTED + " (distributed training)",
      "LOCAL_", INJECTED + " (distributed training)",
      "CUDA_MPS_", DEVICES + " (CUDA MPS)",
      "PET_", INJECTED + " (torchrun reads its options from PET_* variables)");

  private static Map<String, String> names() {
    Map<String, String> names = new LinkedHashMap<>();
    for (GpuVendor vendor : GpuVendor.values()) {
      names.put(vendor.visibilityVariable(), INJECTED + " from the assigned cards");
    }
    for (String name : List.of("MTHREADS_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
        "NVIDIA_VISIBLE_DEVICES", "ASCEND_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")) {
      names.put(name, DEVICES);
    }
    for (String name : List.of("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT")) {
      names.put(name, CODE);
    }
    for (String name : List.of("WORLD_SIZE", "RANK", "NNODES", "NODE_RANK", "GROUP_RANK")) {
      names.put(name, INJECTED + " (distributed training)");
    }
    names.put("PORT", INJECTED + " (an inference task's host port)");
    names.put(HOME, INJECTED + " (a directory of the task's own)");
    names.put(TMPDIR, INJECTED + " (a directory of the task's own)");
    return Map.copyOf(names);
  }

  /** Why a task may not set {@code name} in its {@code env}; empty when it may. */
  public static Optional<String> whyReserved(String name) {
    String why = NAMES.get(name);
    if (why != null) {
      return Optional.of(why);
    }
    return PREFIXES.entrySet().stream().filter(prefix -> name.startsWith(prefix.getKey()))
        .map(Map.Entry::getValue).findFirst();
  }

  public static boolean isReserved(String name) {
    return whyReserved(name).isPresent();
  }

  /** The reserved exact names, sorted (for documentation and tests). */
  public static Set<String> reservedNames() {
    return new TreeSet<>(NAMES.keySet());
  }

  /** The reserved prefixes, sorted. */
  public static Set<String> reservedPrefixes() {
    return new TreeSet<>(PREFIXES.keySet());
  }

  /** The host's {@link #FROM_HOST} variables that are set. */
  public static Map<String, String> fromHost(Map<String, String> host) {
    Map<String, String> env = new LinkedHashMap<>();
    FROM_HOST.forEach(name -> {
      if (host.get(name) != null) {
        env.put(name, host.get(name));
      }
    });
    return env;
  }
}
