package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.message.Checkpoint;
import io.heteroflow.protocol.message.Run;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/** A task as a user declared it (SPEC §10), already validated by the API's strict decoder. */
public record TaskSpec(String name, String type, String image, List<String> command, Map<String, String> env,
                       int priority, boolean preemptible, int gpuRequired, long gpuMemoryMb, String gpuType,
                       List<String> gpuModels, double cpuCores, long memoryMb, int timeoutSeconds, int terminationGraceSeconds,
                       Checkpoint checkpoint,
                       Map<String, String> nodeSelector, Map<String, String> labels, String queue,
                       Integer expectedRuntimeSeconds) {

  public static final int DEFAULT_TIMEOUT_SECONDS = Run.DEFAULT_TIMEOUT_SECONDS;
  public static final int DEFAULT_PRIORITY = 50;
  /** SIGTERM, then this long for the task to exit, then SIGKILL: for a stop, a timeout and a preemption. */
  public static final int DEFAULT_TERMINATION_GRACE_SECONDS = Run.DEFAULT_TERMINATION_GRACE_SECONDS;
  public static final int MAX_TERMINATION_GRACE_SECONDS = 600;

  /** A spec in the default queue (resolved at submission: root until queues say otherwise). */
  public TaskSpec(String name, String type, String image, List<String> command, Map<String, String> env,
                  int priority, boolean preemptible, int gpuRequired, long gpuMemoryMb, String gpuType,
                  List<String> gpuModels, double cpuCores, long memoryMb, int timeoutSeconds,
                  int terminationGraceSeconds, Checkpoint checkpoint, Map<String, String> nodeSelector,
                  Map<String, String> labels) {
    this(name, type, image, command, env, priority, preemptible, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores,
        memoryMb, timeoutSeconds, terminationGraceSeconds, checkpoint, nodeSelector, labels, QueueRecord.ROOT);
  }

  /** A spec that declares no expected runtime (its timeout bounds how long it runs). */
  public TaskSpec(String name, String type, String image, List<String> command, Map<String, String> env,
                  int priority, boolean preemptible, int gpuRequired, long gpuMemoryMb, String gpuType,
                  List<String> gpuModels, double cpuCores, long memoryMb, int timeoutSeconds,
                  int terminationGraceSeconds, Checkpoint checkpoint, Map<String, String> nodeSelector,
                  Map<String, String> labels, String queue) {
    this(name, type, image, command, env, priority, preemptible, gpuRequired, gpuMemoryMb, gpuType, gpuModels, cpuCores,
        memoryMb, timeoutSeconds, terminationGraceSeconds, checkpoint, nodeSelector, labels, queue, null);
  }

  /**
   * {@code queue} null: the submitter's default queue, resolved before the task is stored.
   * {@code expectedRuntimeSeconds} (null: not declared) is what reservations and ETAs plan with (SPEC §13).
   */
  public TaskSpec {
    command = command == null ? List.of() : List.copyOf(command);
    env = env == null ? Map.of() : Map.copyOf(env);
    gpuModels = gpuModels == null ? List.of() : List.copyOf(gpuModels);
    nodeSelector = nodeSelector == null ? Map.of() : Map.copyOf(nodeSelector);
    labels = labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** This spec with another name and gpu_type (a group member named by its rank, or given the group's type). */
  public TaskSpec with(String newName, String newGpuType) {
    return new TaskSpec(newName, type, image, command, env, priority, preemptible, gpuRequired, gpuMemoryMb, newGpuType,
        gpuModels, cpuCores, memoryMb, timeoutSeconds, terminationGraceSeconds, checkpoint, nodeSelector, labels, queue,
        expectedRuntimeSeconds);
  }

  /** This spec in {@code newQueue} (the queue its submission resolved to). */
  public TaskSpec inQueue(String newQueue) {
    return new TaskSpec(name, type, image, command, env, priority, preemptible, gpuRequired, gpuMemoryMb, gpuType,
        gpuModels, cpuCores, memoryMb, timeoutSeconds, terminationGraceSeconds, checkpoint, nodeSelector, labels,
        newQueue, expectedRuntimeSeconds);
  }

  /** The fields kept in the {@code spec} column (those without a column of their own). */
  public JsonObject toSpecJson() {
    JsonObject json = new JsonObject();
    if (expectedRuntimeSeconds != null) {
      json.put("expected_runtime_seconds", expectedRuntimeSeconds);
    }
    return json
        .put("image", image)
        .put("command", new JsonArray(List.copyOf(command)))
        .put("env", new JsonObject(Map.copyOf(env)))
        .put("gpu_model", new JsonArray(List.copyOf(gpuModels)))
        .put("timeout_seconds", timeoutSeconds)
        .put("termination_grace_seconds", terminationGraceSeconds)
        .put("checkpoint", Checkpoint.toJson(checkpoint))
        .put("node_selector", new JsonObject(Map.copyOf(nodeSelector)))
        .put("labels", new JsonObject(Map.copyOf(labels)));
  }
}
