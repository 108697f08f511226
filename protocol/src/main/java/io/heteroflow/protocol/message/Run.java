package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * control plane → agent: run this bound task on these cards (or this shard), with this host port and master port
 * (docs/event-bus.md "Run"). Pushed at bind and repeated in heartbeat replies until the agent claims it;
 * {@code term} is the leader term that bound it (0 when unknown); {@code attempt} how many times the task was
 * preempted before this run (the agent echoes it in its Report, so a late report of an earlier run settles
 * nothing).
 */
public record Run(UUID taskId, long term, int attempt, String name, String image, List<String> command, Map<String, String> env,
                  List<Integer> gpuIndices, Shard shard, Integer hostPort, Integer masterPort, int timeoutSeconds,
                  int terminationGraceSeconds, Checkpoint checkpoint) implements BusMessage {
  /** A run that names no time limit gets this one (two hours). */
  public static final int DEFAULT_TIMEOUT_SECONDS = 7200;
  /** A run that names no termination grace gets this one: SIGTERM, 10 s, SIGKILL. */
  public static final int DEFAULT_TERMINATION_GRACE_SECONDS = 10;

  public Run {
    command = List.copyOf(command);
    env = Map.copyOf(env);
    gpuIndices = List.copyOf(gpuIndices);
  }

  /** The host cards the task uses: its shard's card, else its whole cards. */
  public List<Integer> cards() {
    return shard != null ? List.of(shard.cardIndex()) : gpuIndices;
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString()).put("term", term).put("attempt", attempt)
        .put("name", name)
        .put("image", image).put("command", new JsonArray(command)).put("env", new JsonObject(Map.copyOf(env)))
        .put("gpu_indices", new JsonArray(gpuIndices)).put("shard", Shard.toJson(shard)).put("host_port", hostPort)
        .put("master_port", masterPort).put("timeout_seconds", timeoutSeconds)
        .put("termination_grace_seconds", terminationGraceSeconds).put("checkpoint", Checkpoint.toJson(checkpoint));
  }

  public static Run fromJson(JsonObject json) {
    return read(BusMessage.versioned(json));
  }

  static Run read(BusPayload run) {
    Long term = run.optionalLong("term");
    Integer timeout = run.optionalInteger("timeout_seconds");
    Integer grace = run.optionalInteger("termination_grace_seconds");
    if (grace != null && grace < 0) {
      throw run.bad("termination_grace_seconds", "0 or more is required");
    }
    Integer attempt = run.optionalInteger("attempt");
    if (attempt != null && attempt < 0) {
      throw run.bad("attempt", "0 or more is required");
    }
    return new Run(run.uuid("task_id"), term == null ? 0 : term, attempt == null ? 0 : attempt,
        run.optionalString("name"),
        run.optionalString("image"), run.strings("command"), run.stringMap("env"), run.integers("gpu_indices"),
        Shard.read(run.optionalObject("shard")), run.optionalInteger("host_port"), run.optionalInteger("master_port"),
        timeout == null ? DEFAULT_TIMEOUT_SECONDS : timeout, grace == null ? DEFAULT_TERMINATION_GRACE_SECONDS : grace,
        Checkpoint.read(run.optionalObject("checkpoint")));
  }

  static List<Run> readAll(BusPayload payload, String field) {
    List<Run> runs = new ArrayList<>();
    payload.objects(field).forEach(run -> runs.add(read(run)));
    return runs;
  }
}
