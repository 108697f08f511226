package io.heteroflow.agent;

import io.heteroflow.agent.executor.ExitReport;
import io.heteroflow.agent.executor.RunSpec;
import io.heteroflow.agent.executor.TaskExecutor;
import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.agent.node.NodeSource;
import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.agent.transport.EventBusTransport;
import io.heteroflow.agent.transport.Backoff;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.ShardQos;
import io.heteroflow.protocol.TaskEnvironment;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Beat;
import io.heteroflow.protocol.message.Claim;
import io.heteroflow.protocol.message.FailureCode;
import io.heteroflow.protocol.message.Logs;
import io.heteroflow.protocol.message.Reconciliation;
import io.heteroflow.protocol.message.Release;
import io.heteroflow.protocol.message.Report;
import io.heteroflow.protocol.message.Run;
import io.heteroflow.protocol.message.Shard;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
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
  /** How long a clean stop waits for the control plane to acknowledge the node's release. */
  private static final long RELEASE_TIMEOUT_MS = 1000;

  private final NodeSource node;
  private final TaskExecutor executor;
  private final long heartbeatMs;
  /**
   * This agent process, drawn at each start: heartbeats carry it, and it is the identity the control plane holds
   * the node for (one id for both: a restart and a second process are both "another boot").
   */
  private final String bootId = UUID.randomUUID().toString();
  private final java.time.Instant startedAt = java.time.Instant.now();
  private final Set<String> known = new HashSet<>();
  /** The attempt (Run.attempt) of each task this agent started, echoed in its Report. */
  private final Map<String, Integer> attempts = new HashMap<>();
  private final Set<String> stopBeforeStart = new HashSet<>();
  /** Tasks whose process has ended and whose report is on its way: a stop for them is already answered. */
  private final Set<String> reporting = new HashSet<>();
  private AgentTransport transport;
  private NodeReading lastReading;
  /** Full heartbeat or liveness-only beat: which of the two each periodic message is. */
  private final HeartbeatCadence cadence = new HeartbeatCadence();
  private long sequence;
  private long highestTerm;
  private boolean beating;
  /** Set by {@link #crash}: this agent says nothing more, as a host that lost power. */
  private volatile boolean crashed;
  /**
   * Whether the control plane applied this process's last heartbeat: it holds its node. Until then, and while
   * another live agent process with the same node id holds it (409 node_held), a run or a stop of a task this
   * process does not know is not for it: ignored (the heartbeat reconciliation delivers it once it holds).
   */
  private boolean holding;
  /** Whether the node_held refusal has been logged since this process last held its node (logged once). */
  private boolean refusalLogged;
  private boolean stopping;

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
        transport.onMessage(BusAddresses.agentStop(node.nodeId()), message -> stop(Stop.fromJson(message).taskId())),
        transport.onRequest(BusAddresses.agentLogs(node.nodeId()), body -> logs(body).map(Logs.Answer::toJson)))
        .onSuccess(all -> vertx.setPeriodic(0, heartbeatMs, id -> heartbeat()));
  }

  /**
   * A clean stop: no more heartbeats, the node released (so a replacement process takes it over at once; at most
   * {@link #RELEASE_TIMEOUT_MS} waited for, whatever the answer), then the executor closed.
   */
  @Override
  public Future<?> stop() {
    stopping = true;
    Future<?> released = crashed || !holding ? Future.succeededFuture()
        : transport.request(BusAddresses.NODE_RELEASE, new Release(node.nodeId(), bootId).toJson())
            .timeout(RELEASE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
            .onSuccess(reply -> LOG.info("node " + node.nodeId() + " released by its agent process (boot " + bootId
                + "): " + (Release.Answer.fromJson(reply).released() ? "another process may take it over at once"
                : "it was not the holder")))
            .onFailure(e -> LOG.info("node " + node.nodeId() + ": release not acknowledged (" + e.getMessage()
                + "); a replacement takes it over once this process has been silent for the hold window"));
    return released.transform(done -> transport.close()).transform(closed -> vertx.executeBlocking(() -> {
      executor.close();
      return null;
    }));
  }

  /**
   * Simulates the loss of the host (for simulated fleets and tests): from now on no heartbeat, claim or report
   * leaves this agent, so its node falls silent and its tasks are lost, not reported stopped.
   */
  public void crash() {
    crashed = true;
  }

  private void heartbeat() {
    if (crashed || stopping) {
      return;
    }
    if (beating) {
      return;
    }
    beating = true;
    vertx.executeBlocking(node::read)
        .compose(reading -> {
          lastReading = reading;
          boolean full = cadence.full(reading);
          Future<JsonObject> sent = full
              ? transport.request(BusAddresses.NODE_HEARTBEAT,
                  reading.heartbeat(node.nodeId(), bootId, ++sequence, known).toJson())
              : transport.request(BusAddresses.NODE_BEAT,
                  new Beat(node.nodeId(), bootId, ++sequence, List.copyOf(known)).toJson());
          return sent.map(Reconciliation::fromJson)
              .onSuccess(reply -> cadence.answered(!full, reply.applied(), reading))
              .onFailure(e -> cadence.failed())
              .map(reply -> full || reply.applied() ? reply : null);
        })
        .onComplete(done -> beating = false)
        .onSuccess(reply -> {
          if (reply == null) {
            return; // a beat not applied: the next message is a full heartbeat
          }
          if (refusalLogged) {
            refusalLogged = false;
            LOG.info("node " + node.nodeId() + " taken over by this agent process (boot " + bootId + "): its"
                + " holder went silent or released it");
          }
          holding = true;
          reply.run().forEach(this::run);
          reply.stop().forEach(this::stop);
        })
        .onFailure(this::heartbeatRefused);
  }

  /**
   * A heartbeat not applied. Refused as {@code node_held} (another live agent process has this node id): this
   * process is handed no work, says so once, and keeps heartbeating, to take over when the holder falls silent
   * or releases the node.
   */
  private void heartbeatRefused(Throwable e) {
    if (FailureCode.of(e) != FailureCode.CONFLICT || !String.valueOf(e.getMessage()).startsWith("node_held")) {
      LOG.log(Level.FINE, "heartbeat of " + node.nodeId() + " not acknowledged", e);
      return;
    }
    holding = false;
    if (!refusalLogged) {
      refusalLogged = true;
      LOG.warning(e.getMessage() + ". Is another agent running with node id " + node.nodeId() + "? This process"
          + " (boot " + bootId + ") runs nothing and keeps heartbeating until then.");
    }
  }

  /**
   * A run pushed by a leader at bind. A push from a term older than one already seen (a deposed leader that
   * has not noticed yet) is ignored: if its task is real, the heartbeat reconciliation, read from
   * PostgreSQL, delivers it. A malformed run is refused by its reader (400 naming the field).
   */
  private void pushed(JsonObject message) {
    Run run = Run.fromJson(message);
    if (run.term() < highestTerm) {
      LOG.info("ignoring a run from term " + run.term() + " on " + node.nodeId() + ": term " + highestTerm + " seen");
      return;
    }
    highestTerm = run.term();
    run(run);
  }

  private void run(Run run) {
    if (!holding || lastReading == null || !known.add(run.taskId().toString())) {
      return;
    }
    attempts.put(run.taskId().toString(), run.attempt());
    claim(run);
  }

  /**
   * Claims the task (scheduled → running by CAS) and starts it. When the claim's answer is lost, the claim is
   * repeated as a retry, which the control plane also grants for a task already running on this node: the
   * first claim went through but this agent never started it. A refused claim (4xx) is never repeated.
   */
  private void claim(Run run) {
    String taskId = run.taskId().toString();
    Backoff.CLAIM.run(vertx, attempt -> transport.request(BusAddresses.TASK_CLAIM,
            new Claim(run.taskId(), node.nodeId(), attempt > 0).toJson()).map(Claim.Answer::fromJson))
        .onSuccess(answer -> {
          if (!answer.claimed()) {
            forget(taskId);
            return;
          }
          executor.start(runSpec(run)).onComplete(ended -> report(taskId, ended.succeeded() ? ended.result()
              : new ExitReport(TaskStatus.FAILED, null, "AgentError", String.valueOf(ended.cause()), "")));
          if (stopBeforeStart.remove(taskId)) {
            executor.stop(taskId);
          }
        })
        .onFailure(e -> {
          // the control plane fails the task NotRunningOnAgent if the claim did go through (it is not reported)
          LOG.warning("giving up claiming " + taskId + " on " + node.nodeId() + ": " + e.getMessage());
          forget(taskId);
        });
  }

  /**
   * The task's environment: its own variables, less any reserved name ({@link TaskEnvironment}; the control
   * plane refuses them at create, this drops those of a task stored before), then what HeteroFlow sets
   * (visibility, shard limits, ports, ids and the torch.distributed variables of {@link DistributedEnvironment}).
   * The executor puts this on top of an empty environment (only the host's allow-list and a per-task HOME).
   */
  RunSpec runSpec(Run run) {
    Map<String, String> env = new HashMap<>();
    run.env().forEach((name, value) -> {
      if (TaskEnvironment.isReserved(name)) {
        LOG.warning("task " + run.taskId() + ": env." + name + " is reserved, dropped");
      } else {
        env.put(name, value);
      }
    });
    Shard shard = run.shard();
    if (shard != null) {
      env.putAll(ShardQos.environment(shard.qos(), shard.memoryMb(), shard.computePercent()));
    }
    GpuVendor vendor = lastReading.vendor();
    if (vendor != null) {
      env.put(vendor.visibilityVariable(), String.join(",", run.cards().stream().map(String::valueOf).toList()));
    }
    if (run.hostPort() != null) {
      env.put("HETEROFLOW_HOST_PORT", String.valueOf(run.hostPort()));
      env.put("PORT", String.valueOf(run.hostPort()));
    }
    env.put("HETEROFLOW_TASK_ID", run.taskId().toString());
    env.put("HETEROFLOW_NODE_ID", node.nodeId());
    env.putAll(DistributedEnvironment.of(run, lastReading, MASTER_PORT));
    return new RunSpec(run.taskId().toString(), run.image(), run.command(), env, run.timeoutSeconds(), vendor,
        run.cards(), java.time.Duration.ofSeconds(run.terminationGraceSeconds()), run.checkpoint(), run.tenant());
  }

  private void stop(UUID id) {
    String taskId = id.toString();
    if (executor.stop(taskId) || reporting.contains(taskId)) {
      return;
    }
    if (known.contains(taskId)) {
      stopBeforeStart.add(taskId);
      return;
    }
    if (!holding) { // the node's holder may be running it: not this process's to answer
      return;
    }
    report(taskId, new ExitReport(TaskStatus.STOPPED, null, "StoppedByUser", "the agent of " + node.nodeId()
        + " is not running it: it never started under this agent process (started " + startedAt + ")", null));
  }

  /** Reports a result until the control plane answers (its CAS makes a repeated report harmless). */
  private void report(String taskId, ExitReport exit) {
    if (crashed) {
      return;
    }
    reporting.add(taskId);
    JsonObject body = new Report(UUID.fromString(taskId), node.nodeId(), exit.outcome(), exit.exitCode(),
        exit.reasonCode(), exit.message(), exit.logTail(), exit.lastCheckpointAt(), attempts.get(taskId)).toJson();
    Backoff.REPORT.run(vertx, attempt -> transport.request(BusAddresses.TASK_REPORT, body))
        .onSuccess(reply -> forget(taskId))
        .onFailure(e -> {
          LOG.warning("giving up reporting " + taskId + " from " + node.nodeId() + ": " + e.getMessage());
          forget(taskId);
        });
  }

  private void forget(String taskId) {
    known.remove(taskId);
    attempts.remove(taskId);
    reporting.remove(taskId);
    stopBeforeStart.remove(taskId);
  }

  private Future<Logs.Answer> logs(JsonObject body) {
    Logs request = Logs.fromJson(body);
    String taskId = request.taskId().toString();
    return vertx.executeBlocking(() -> executor.logs(taskId, request.offset(), request.maxBytes(), request.tailBytes()))
        .compose(chunk -> chunk.found() || holding ? Future.succeededFuture(chunk)
            : Future.failedFuture(FailureCode.CONFLICT.refusal("node_held: this agent process of node " + node.nodeId()
                + " does not hold the node and does not know task " + taskId)))
        .map(chunk -> new Logs.Answer(request.taskId(), chunk.found(), chunk.offset(), chunk.bytes(), chunk.end(),
            chunk.dropped(), chunk.capBytes()));
  }
}
