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
 * nothing); {@code distributed} is set for a member of a task group (its rank and how it reaches rank 0), null
 * for a single task; {@code tenant} is the task's tenant (the agent runs it as that tenant's user; null from a
 * control plane that predates it: the agent uses the tenant "default").
 */
public record Run(UUID taskId, long term, int attempt, String name, String image, List<String> command, Map<String, String> env,
                  List<Integer> gpuIndices, Shard shard, Integer hostPort, Integer masterPort, int timeoutSeconds,
                  int terminationGraceSeconds, Checkpoint checkpoint, Distributed distributed, String tenant)
    implements BusMessage {
  /** A run that names no time limit gets this one (two hours). */
  public static final int DEFAULT_TIMEOUT_SECONDS = 7200;
  /** A run that names no termination grace gets this one: SIGTERM, 10 s, SIGKILL. */
  public static final int DEFAULT_TERMINATION_GRACE_SECONDS = 10;

  public Run {
    command = List.copyOf(command);
    env = Map.copyOf(env);
    gpuIndices = List.copyOf(gpuIndices);
  }

  /** A run that names no tenant. */
  public Run(UUID taskId, long term, int attempt, String name, String image, List<String> command, Map<String, String> env,
             List<Integer> gpuIndices, Shard shard, Integer hostPort, Integer masterPort, int timeoutSeconds,
             int terminationGraceSeconds, Checkpoint checkpoint, Distributed distributed) {
    this(taskId, term, attempt, name, image, command, env, gpuIndices, shard, hostPort, masterPort, timeoutSeconds,
        terminationGraceSeconds, checkpoint, distributed, null);
  }

  /**
   * A group member's place in its torch.distributed world: the group, how many ranks it has (one member task per
   * rank), this member's rank, where rank 0 listens ({@code masterAddr}:{@code masterPort}) and the backend the
   * control plane chose for the group (the vendor's collective library inside one network domain, gloo across).
   */
  public record Distributed(UUID groupId, int worldSize, int rank, String masterAddr, int masterPort, String backend) {
    public Distributed {
      java.util.Objects.requireNonNull(groupId, "groupId");
      if (worldSize < 1 || rank < 0 || rank >= worldSize) {
        throw new IllegalArgumentException("rank " + rank + " of world size " + worldSize);
      }
      if (masterAddr == null || masterAddr.isBlank() || masterPort < 1 || masterPort > 65535) {
        throw new IllegalArgumentException("master " + masterAddr + ":" + masterPort);
      }
      if (backend == null || backend.isBlank()) {
        throw new IllegalArgumentException("a backend is required");
      }
    }

    public JsonObject toJson() {
      return new JsonObject().put("group_id", groupId.toString()).put("world_size", worldSize).put("rank", rank)
          .put("master_addr", masterAddr).put("master_port", masterPort).put("backend", backend);
    }

    public static JsonObject toJson(Distributed distributed) {
      return distributed == null ? null : distributed.toJson();
    }

    /** The distributed part as stored with a bound member (its wire form), or null. */
    public static Distributed fromJson(JsonObject json) {
      return json == null ? null : read(BusPayload.of(json));
    }

    /** The distributed part of a run, or null when it has none; a bad field is a 400 naming it. */
    static Distributed read(BusPayload distributed) {
      if (distributed == null) {
        return null;
      }
      int worldSize = distributed.requiredInteger("world_size");
      if (worldSize < 1) {
        throw distributed.bad("world_size", "1 or more is required");
      }
      int rank = distributed.requiredInteger("rank");
      if (rank < 0 || rank >= worldSize) {
        throw distributed.bad("rank", "between 0 and world_size - 1 (" + (worldSize - 1) + ") is required");
      }
      String masterAddr = distributed.requiredString("master_addr");
      if (masterAddr.isBlank() || !masterAddr.strip().equals(masterAddr)) {
        throw distributed.bad("master_addr", "an address without blanks is required");
      }
      int masterPort = distributed.requiredInteger("master_port");
      if (masterPort < 1 || masterPort > 65535) {
        throw distributed.bad("master_port", "a port between 1 and 65535 is required");
      }
      String backend = distributed.requiredString("backend");
      if (backend.isBlank()) {
        throw distributed.bad("backend", "a backend name is required");
      }
      return new Distributed(distributed.uuid("group_id"), worldSize, rank, masterAddr, masterPort, backend);
    }
  }

  /** The host cards the task uses: its shard's card, else its whole cards. */
  public List<Integer> cards() {
    return shard != null ? List.of(shard.cardIndex()) : gpuIndices;
  }

  @Override
  public JsonObject toJson() {
    return withTenant(BusMessage.envelope().put("task_id", taskId.toString()).put("term", term).put("attempt", attempt)
        .put("name", name)
        .put("image", image).put("command", new JsonArray(command)).put("env", new JsonObject(Map.copyOf(env)))
        .put("gpu_indices", new JsonArray(gpuIndices)).put("shard", Shard.toJson(shard)).put("host_port", hostPort)
        .put("master_port", masterPort).put("timeout_seconds", timeoutSeconds)
        .put("termination_grace_seconds", terminationGraceSeconds).put("checkpoint", Checkpoint.toJson(checkpoint))
        .put("distributed", Distributed.toJson(distributed)));
  }

  /** The wire form, as {@link #toJson()} with {@code tenant} only when there is one (older readers ignore it). */
  private JsonObject withTenant(JsonObject json) {
    return tenant == null ? json : json.put("tenant", tenant);
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
        Checkpoint.read(run.optionalObject("checkpoint")), Distributed.read(run.optionalObject("distributed")),
        run.optionalString("tenant"));
  }

  static List<Run> readAll(BusPayload payload, String field) {
    List<Run> runs = new ArrayList<>();
    payload.objects(field).forEach(run -> runs.add(read(run)));
    return runs;
  }
}
