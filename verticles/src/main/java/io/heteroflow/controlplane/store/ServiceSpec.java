package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.service.Autoscale;
import io.heteroflow.controlplane.service.ScheduleWindows;
import io.vertx.core.json.JsonObject;

/**
 * An inference service as a user declared it (SPEC §9): {@code replicas} independent copies of {@code template}
 * (a full inference task spec), each in a numbered slot and placed on its own; optionally autoscaled within
 * {@code autoscale} and governed by schedule {@code windows} (both null when not declared).
 */
public record ServiceSpec(String name, String gpuType, int replicas, TaskSpec template, Autoscale autoscale,
                          ScheduleWindows windows, String queue) {
  public static final int MAX_REPLICAS = 1024;
  /** What a replica runs for unless its template says otherwise: the longest timeout (a service runs until stopped). */
  public static final int REPLICA_TIMEOUT_SECONDS = 30 * 24 * 3600;
  /** The label every replica carries: placement spreads a service's replicas by it. */
  public static final String SERVICE_LABEL = "heteroflow.io/service";

  public ServiceSpec inQueue(String newQueue) {
    return new ServiceSpec(name, gpuType, replicas, template, autoscale, windows, newQueue);
  }

  /**
   * What {@code task_groups.replica_spec} keeps: the template's columns and its spec JSON, from which each replica
   * is inserted in SQL (so a rebuild needs nothing but the group row).
   */
  JsonObject replicaSpecJson() {
    return new JsonObject().put("name", template.name()).put("preemptible", template.preemptible())
        .put("gpu_required", template.gpuRequired()).put("gpu_memory_mb", template.gpuMemoryMb())
        .put("gpu_type", template.gpuType()).put("cpu_cores", template.cpuCores()).put("memory_mb", template.memoryMb())
        .put("spec", template.toSpecJson());
  }
}
