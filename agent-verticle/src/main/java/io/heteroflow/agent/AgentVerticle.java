package io.heteroflow.agent;

import io.heteroflow.agent.executor.ExitReport;
import io.heteroflow.agent.executor.RunSpec;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.agent.transport.EventBusTransport;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.BusPayload;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.ShardQos;
import io.heteroflow.protocol.TaskEnvironment;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One node agent: heartbeats (with a boot id and a sequence number) to the control plane, runs the tasks
 * bound to its node after claiming each scheduled → running, injects the cards' visibility variable, shard
 * limits and the distributed-training variables, reports each result until the control plane acknowledges
 * it, and stops tasks on request. Every message it acts on is idempotent: the control plane's CAS decides.
 * It talks to the control plane only through an {@link AgentTransport}.
 */
public final class AgentVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(AgentVerticle.class.getName());
  /** MASTER_PORT of a run that names none (a control plane from before master ports were chosen per task). */
  public static final int MASTER_PORT = 29500;
  private static final long REQUEST_TIMEOUT_MS = 5000;
  private static final long REPORT_RETRY_MS = 2000;
  private static final int CLAIM_ATTEMPTS = 15;

  private final NodeSource node;
  private final TaskExecutor executor;
  private final long heartbeatMs;
  private final String bootId = UUID.randomUUID().toString();
  private final java.time.Instant startedAt = java.time.Instant.now();
  private final Set<String> known = new HashSet<>();
  private final Set<String> stopBeforeStart = new HashSet<>();
  private AgentTransport transport;
  private NodeReading lastReading;
  private long sequence;
  private long highestTerm;
  private boolean beating;

  public AgentVerticle(NodeSource node, TaskExecutor executor, long heartbeatMs) {
    this(node, executor, heartbeatMs, null);
  }

  public AgentVerticle(NodeSource node, TaskExecutor executor, long heartbeatMs, AgentTransport transport) {
    this.node = node;
    this.executor = executor;
    this.heartbeatMs = heartbeatMs;
    this.transport = transport;
  }

  /**
   * Completes once its run, stop and logs handlers are reachable (cluster-wide on a clustered bus); the first
   * heartbeat goes out only then, so a run pushed in answer to it finds the handler.
   */
  @Override
  public Future<?> start() {
    if (transport == null) {
      transport = new EventBusTransport(vertx.eventBus(), REQUEST_TIMEOUT_MS);
    }
    return Future.all(
        transport.onMessage(BusAddresses.agentRun(node.nodeId()), this::pushed),
        transport.onMessage(BusAddresses.agentStop(node.nodeId()),
            message -> stop(BusPayload.of(message).uuid("task_id").toString())),
        transport.onRequest(BusAddresses.agentLogs(node.nodeId()), this::logs))
        .onSuccess(all -> vertx.setPeriodic(0, heartbeatMs, id -> heartbeat()));
  }

  @Override
  public Future<?> stop() {
    return vertx.executeBlocking(() -> {
      executor.close();
      return null;
    });
  }

  private void heartbeat() {
    if (beating) {
      return;
    }
    beating = true;
    vertx.executeBlocking(node::read)
        .compose(reading -> {
          lastReading = reading;
          return transport.request(BusAddresses.NODE_HEARTBEAT,
              reading.heartbeat(node.nodeId(), bootId, ++sequence, known));
        })
        .onComplete(done -> beating = false)
        .onSuccess(reply -> {
          reply.getJsonArray("run", new JsonArray()).forEach(task -> run((JsonObject) task));
          reply.getJsonArray("stop", new JsonArray()).forEach(taskId -> stop((String) taskId));
        })
        .onFailure(e -> LOG.log(Level.FINE, "heartbeat of " + node.nodeId() + " not acknowledged", e));
  }

  /**
   * A run pushed by a leader at bind. A push from a term older than one already seen (a deposed leader that
   * has not noticed yet) is ignored: if its task is real, the heartbeat reconciliation, read from
   * PostgreSQL, delivers it.
   */
  private void pushed(JsonObject task) {
    long term = validRun(BusPayload.of(task));
    if (term < highestTerm) {
      LOG.info("ignoring a run from term " + term + " on " + node.nodeId() + ": term " + highestTerm + " seen");
      return;
    }
    highestTerm = term;
    run(task);
  }

  /** Refuses (400 naming the field) a run whose fields are not of the types the agent reads; answers its term. */
  private static long validRun(BusPayload run) {
    run.uuid("task_id");
    run.optionalString("image");
    run.strings("command");
    run.optionalObject("env");
    run.integers("gpu_indices");
    BusPayload shard = run.optionalObject("shard");
    if (shard != null) {
      shard.requiredInteger("card_index");
      shard.optionalLong("memory_mb");
      shard.optionalInteger("compute_percent");
      shard.optionalString("qos");
    }
    run.optionalInteger("host_port");
    run.optionalInteger("timeout_seconds");
    Long term = run.optionalLong("term");
    return term == null ? 0L : term;
  }

  private void run(JsonObject task) {
    String taskId = task.getString("task_id");
    if (lastReading == null || !known.add(taskId)) {
      return;
    }
    claim(task, 0);
  }

  /**
   * Claims the task (scheduled → running by CAS) and starts it. When the claim's answer is lost, the claim is
   * repeated as a retry, which the control plane also grants for a task already running on this node: the
   * first claim went through but this agent never started it.
   */
  private void claim(JsonObject task, int attempt) {
    String taskId = task.getString("task_id");
    JsonObject claim = new JsonObject().put("task_id", taskId).put("node_id", node.nodeId()).put("retry", attempt > 0);
    transport.request(BusAddresses.TASK_CLAIM, claim)
        .onSuccess(reply -> {
          if (!reply.getBoolean("claimed", false)) {
            known.remove(taskId);
            return;
          }
          executor.start(runSpec(task)).onComplete(ended -> report(taskId, ended.succeeded() ? ended.result()
              : new ExitReport(TaskStatus.FAILED, null, "AgentError", String.valueOf(ended.cause()), ""), 0));
          if (stopBeforeStart.remove(taskId)) {
            executor.stop(taskId);
          }
        })
        .onFailure(e -> {
          if (attempt < CLAIM_ATTEMPTS && BusPayload.retryable(e)) {
            vertx.setTimer(REPORT_RETRY_MS, id -> claim(task, attempt + 1));
          } else {
            known.remove(taskId);
          }
        });
  }

  /**
   * The task's environment: its own variables, less any reserved name ({@link TaskEnvironment}; the control
   * plane refuses them at create, this drops those of a task stored before), then what HeteroFlow sets.
   * The executor puts this on top of an empty environment (only the host's allow-list and a per-task HOME).
   */
  RunSpec runSpec(JsonObject task) {
    Map<String, String> env = new HashMap<>();
    task.getJsonObject("env", new JsonObject()).forEach(entry -> {
      if (TaskEnvironment.isReserved(entry.getKey())) {
        LOG.warning("task " + task.getString("task_id") + ": env." + entry.getKey() + " is reserved, dropped");
      } else {
        env.put(entry.getKey(), String.valueOf(entry.getValue()));
      }
    });
    StringBuilder cards = new StringBuilder();
    for (Object index : task.getJsonArray("gpu_indices", new JsonArray())) {
      cards.append(cards.length() == 0 ? "" : ",").append(index);
    }
    JsonObject shard = task.getJsonObject("shard");
    if (shard != null) {
      cards.append(shard.getInteger("card_index"));
      env.putAll(ShardQos.environment(shard.getString("qos"), shard.getLong("memory_mb"),
          shard.getInteger("compute_percent")));
    }
    GpuVendor vendor = lastReading.vendor();
    if (vendor != null) {
      env.put(vendor.visibilityVariable(), cards.toString());
    }
    Integer hostPort = task.getInteger("host_port");
    if (hostPort != null) {
      env.put("HETEROFLOW_HOST_PORT", String.valueOf(hostPort));
      env.put("PORT", String.valueOf(hostPort));
    }
    env.put("HETEROFLOW_TASK_ID", task.getString("task_id"));
    env.put("HETEROFLOW_NODE_ID", node.nodeId());
    env.put("MASTER_ADDR", lastReading.internalIps().get(0));
    env.put("MASTER_PORT", String.valueOf(task.getInteger("master_port", MASTER_PORT)));
    env.put("WORLD_SIZE", "1");
    env.put("RANK", "0");
    List<String> command = task.getJsonArray("command", new JsonArray()).stream().map(String::valueOf).toList();
    return new RunSpec(task.getString("task_id"), task.getString("image"), command, env,
        task.getInteger("timeout_seconds", 7200), vendor, cardList(task, shard));
  }

  private static List<Integer> cardList(JsonObject task, JsonObject shard) {
    if (shard != null) {
      return List.of(shard.getInteger("card_index"));
    }
    return task.getJsonArray("gpu_indices", new JsonArray()).stream().map(index -> ((Number) index).intValue()).toList();
  }

  private void stop(String taskId) {
    if (taskId == null || executor.stop(taskId)) {
      return;
    }
    if (known.contains(taskId)) {
      stopBeforeStart.add(taskId);
      return;
    }
    report(taskId, new ExitReport(TaskStatus.STOPPED, null, "StoppedByUser", "the agent of " + node.nodeId()
        + " is not running it: it never started under this agent process (started " + startedAt + ")", null), 0);
  }

  /** Reports a result until the control plane answers (its CAS makes a repeated report harmless). */
  private void report(String taskId, ExitReport exit, int attempt) {
    JsonObject body = new JsonObject().put("task_id", taskId).put("node_id", node.nodeId())
        .put("outcome", exit.outcome().wire()).put("exit_code", exit.exitCode()).put("reason_code", exit.reasonCode())
        .put("message", exit.message()).put("log_tail", exit.logTail());
    transport.request(BusAddresses.TASK_REPORT, body)
        .onSuccess(reply -> known.remove(taskId))
        .onFailure(e -> {
          if (attempt < 100 && BusPayload.retryable(e)) {
            vertx.setTimer(REPORT_RETRY_MS, id -> report(taskId, exit, attempt + 1));
          } else {
            LOG.warning("giving up reporting " + taskId + " from " + node.nodeId() + ": " + e.getMessage());
            known.remove(taskId);
          }
        });
  }

  private Future<JsonObject> logs(JsonObject body) {
    BusPayload request = BusPayload.of(body);
    String taskId = request.uuid("task_id").toString();
    Integer maxBytes = request.optionalInteger("max_bytes");
    int limit = maxBytes == null ? 1 << 20 : maxBytes;
    return vertx.executeBlocking(() -> executor.logs(taskId, limit))
        .map(text -> new JsonObject().put("task_id", taskId).put("text", text));
  }
}
