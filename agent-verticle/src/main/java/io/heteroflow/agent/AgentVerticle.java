package io.heteroflow.agent;

import io.heteroflow.agent.executor.ExitReport;
import io.heteroflow.agent.executor.RunSpec;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.ShardQos;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
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
 * bound to its node after claiming each scheduled → running, injects the cards' visibility variable and the
 * distributed-training variables, reports each result until the control plane acknowledges it, and stops
 * tasks on request. Every message it acts on is idempotent: the control plane's CAS decides.
 */
public final class AgentVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(AgentVerticle.class.getName());
  public static final int MASTER_PORT = 29500;
  private static final long REQUEST_TIMEOUT_MS = 5000;
  private static final long REPORT_RETRY_MS = 2000;

  private final SimulatedNode node;
  private final TaskExecutor executor;
  private final long heartbeatMs;
  private final String bootId = UUID.randomUUID().toString();
  private final Set<String> known = new HashSet<>();
  private final Map<String, Boolean> stopBeforeStart = new HashMap<>();
  private long sequence;

  public AgentVerticle(SimulatedNode node, TaskExecutor executor, long heartbeatMs) {
    this.node = node;
    this.executor = executor;
    this.heartbeatMs = heartbeatMs;
  }

  @Override
  public Future<?> start() {
    vertx.eventBus().<JsonObject>consumer(BusAddresses.agentRun(node.id()), message -> run(message.body()));
    vertx.eventBus().<JsonObject>consumer(BusAddresses.agentStop(node.id()),
        message -> stop(message.body().getString("task_id")));
    vertx.eventBus().<JsonObject>consumer(BusAddresses.agentLogs(node.id()), this::logs);
    vertx.setPeriodic(0, heartbeatMs, id -> heartbeat());
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    return vertx.executeBlocking(() -> {
      executor.close();
      return null;
    });
  }

  private void heartbeat() {
    JsonObject beat = new JsonObject()
        .put("node_id", node.id())
        .put("boot_id", bootId)
        .put("seq", ++sequence)
        .put("gpu_vendor", node.vendor().id())
        .put("cpu_cores", node.cpuCores())
        .put("cpu_percent", node.cpuPercent())
        .put("memory_total_gb", node.memoryGb())
        .put("memory_used_mb", node.memoryUsedMb())
        .put("cards", node.cardReports())
        .put("active_tasks", new JsonArray(List.copyOf(known)))
        .put("internal_ips", new JsonArray(node.internalIps()))
        .put("labels", new JsonObject(Map.copyOf(node.labels())))
        .put("topology", node.topologyLabel())
        .put("location", new JsonObject(Map.copyOf(node.location())))
        .put("dedicated_tenant", node.dedicatedTenant());
    vertx.eventBus().<JsonObject>request(BusAddresses.NODE_HEARTBEAT, beat,
            new DeliveryOptions().setSendTimeout(REQUEST_TIMEOUT_MS))
        .onSuccess(reply -> {
          reply.body().getJsonArray("run", new JsonArray()).forEach(task -> run((JsonObject) task));
          reply.body().getJsonArray("stop", new JsonArray()).forEach(taskId -> stop((String) taskId));
        })
        .onFailure(e -> LOG.log(Level.FINE, "heartbeat of " + node.id() + " not acknowledged", e));
  }

  private void run(JsonObject task) {
    String taskId = task.getString("task_id");
    if (!known.add(taskId)) {
      return;
    }
    JsonObject claim = new JsonObject().put("task_id", taskId).put("node_id", node.id());
    vertx.eventBus().<JsonObject>request(BusAddresses.TASK_CLAIM, claim,
            new DeliveryOptions().setSendTimeout(REQUEST_TIMEOUT_MS))
        .onSuccess(reply -> {
          if (!reply.body().getBoolean("claimed", false)) {
            known.remove(taskId);
            return;
          }
          executor.start(runSpec(task)).onComplete(ended -> report(taskId, ended.succeeded() ? ended.result()
              : new ExitReport(TaskStatus.FAILED, null, "AgentError", String.valueOf(ended.cause()), ""), 0));
          if (stopBeforeStart.remove(taskId) != null) {
            executor.stop(taskId);
          }
        })
        .onFailure(e -> known.remove(taskId));
  }

  private RunSpec runSpec(JsonObject task) {
    Map<String, String> env = new HashMap<>();
    task.getJsonObject("env", new JsonObject()).forEach(entry -> env.put(entry.getKey(), String.valueOf(entry.getValue())));
    StringBuilder cards = new StringBuilder();
    for (Object index : task.getJsonArray("gpu_indices", new JsonArray())) {
      cards.append(cards.length() == 0 ? "" : ",").append(index);
    }
    JsonObject shard = task.getJsonObject("shard");
    if (shard != null) {
      // a shard sees only its card, with its memory and compute limits
      cards.append(shard.getInteger("card_index"));
      env.putAll(ShardQos.environment(shard.getString("qos"), shard.getLong("memory_mb"),
          shard.getInteger("compute_percent")));
    }
    env.put(node.vendor().visibilityVariable(), cards.toString());
    Integer hostPort = task.getInteger("host_port");
    if (hostPort != null) {
      env.put("HETEROFLOW_HOST_PORT", String.valueOf(hostPort));
      env.put("PORT", String.valueOf(hostPort));
    }
    env.put("HETEROFLOW_TASK_ID", task.getString("task_id"));
    env.put("HETEROFLOW_NODE_ID", node.id());
    env.put("MASTER_ADDR", node.internalIps().get(0));
    env.put("MASTER_PORT", String.valueOf(MASTER_PORT));
    env.put("WORLD_SIZE", "1");
    env.put("RANK", "0");
    List<String> command = task.getJsonArray("command", new JsonArray()).stream().map(String::valueOf).toList();
    return new RunSpec(task.getString("task_id"), task.getString("image"), command, env,
        task.getInteger("timeout_seconds", 7200));
  }

  private void stop(String taskId) {
    if (taskId == null || executor.stop(taskId)) {
      return;
    }
    if (known.contains(taskId)) {
      stopBeforeStart.put(taskId, true);
      return;
    }
    report(taskId, new ExitReport(TaskStatus.STOPPED, null, "StoppedByUser", "stopped before it started", null), 0);
  }

  /** Reports a result until the control plane answers (its CAS makes a repeated report harmless). */
  private void report(String taskId, ExitReport exit, int attempt) {
    JsonObject body = new JsonObject().put("task_id", taskId).put("node_id", node.id())
        .put("outcome", exit.outcome().wire()).put("exit_code", exit.exitCode()).put("reason_code", exit.reasonCode())
        .put("message", exit.message()).put("log_tail", exit.logTail());
    vertx.eventBus().<JsonObject>request(BusAddresses.TASK_REPORT, body,
            new DeliveryOptions().setSendTimeout(REQUEST_TIMEOUT_MS))
        .onSuccess(reply -> known.remove(taskId))
        .onFailure(e -> {
          if (attempt < 100) {
            vertx.setTimer(REPORT_RETRY_MS, id -> report(taskId, exit, attempt + 1));
          } else {
            LOG.warning("giving up reporting " + taskId + " from " + node.id() + ": " + e.getMessage());
            known.remove(taskId);
          }
        });
  }

  private void logs(Message<JsonObject> message) {
    String taskId = message.body().getString("task_id", "");
    int limit = message.body().getInteger("max_bytes", 1 << 20);
    vertx.executeBlocking(() -> executor.logs(taskId, limit))
        .onSuccess(text -> message.reply(new JsonObject().put("task_id", taskId).put("text", text)))
        .onFailure(e -> message.fail(500, e.getMessage()));
  }
}
