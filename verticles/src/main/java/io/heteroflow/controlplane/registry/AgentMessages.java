package io.heteroflow.controlplane.registry;

import io.heteroflow.controlplane.scheduler.framework.ShardAssignment;
import io.heteroflow.controlplane.store.TaskRecord;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/** The control plane's messages to agents (schema in docs/event-bus.md). */
public final class AgentMessages {
  private AgentMessages() {}

  /**
   * "Run this task on these cards (or this shard), with this host port and master port": pushed at bind, repeated
   * in heartbeat replies until the agent claims it.
   */
  public static JsonObject run(TaskRecord task, List<Integer> gpuIndices, JsonObject shard, Integer hostPort,
                               Integer masterPort, Long term) {
    return new JsonObject()
        .put("term", term)
        .put("task_id", task.id().toString())
        .put("name", task.name())
        .put("image", task.spec().getString("image"))
        .put("command", new JsonArray(List.copyOf(task.command())))
        .put("env", new JsonObject(Map.copyOf(task.env())))
        .put("gpu_indices", new JsonArray(List.copyOf(gpuIndices)))
        .put("shard", shard)
        .put("host_port", hostPort)
        .put("master_port", masterPort)
        .put("timeout_seconds", task.timeoutSeconds());
  }

  /** The wire form of a shard: card index, memory bound, compute share, QoS level. */
  public static JsonObject shard(ShardAssignment shard) {
    return shard == null ? null : new JsonObject().put("card_index", shard.cardIndex())
        .put("memory_mb", shard.memoryMb()).put("compute_percent", shard.computePercent()).put("qos", shard.qos());
  }

  /** The reply to a heartbeat: what the agent should be running or stopping according to PostgreSQL. */
  public static JsonObject reconciliation(boolean applied, List<TaskRecord> tasks) {
    JsonArray run = new JsonArray();
    JsonArray stop = new JsonArray();
    for (TaskRecord task : tasks) {
      switch (task.status()) {
        case SCHEDULED -> run.add(run(task, task.gpuIndices(), task.shard(), task.hostPort(), task.masterPort(),
            task.boundTerm()));
        case STOPPING, PREEMPTING -> stop.add(task.id().toString());
        default -> { }
      }
    }
    return new JsonObject().put("applied", applied).put("run", run).put("stop", stop);
  }
}
