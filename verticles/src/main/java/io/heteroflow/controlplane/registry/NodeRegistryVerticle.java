package io.heteroflow.controlplane.registry;

import io.heteroflow.controlplane.Services;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The control plane's side of the agents: applies heartbeats (newest sequence wins, liveness by receipt
 * time), answers with what each agent should run or stop, claims tasks scheduled → running for agents and
 * settles their results by CAS, so a late or duplicated report can never settle twice.
 */
public final class NodeRegistryVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(NodeRegistryVerticle.class.getName());
  private static final Pattern NODE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  private static final int BAD_REQUEST = 400;
  private final Services services;
  private final int offlineGraceSeconds;
  private final long ledgerCheckMs;

  public NodeRegistryVerticle(Services services, int offlineGraceSeconds, long ledgerCheckMs) {
    this.services = services;
    this.offlineGraceSeconds = offlineGraceSeconds;
    this.ledgerCheckMs = ledgerCheckMs;
  }

  @Override
  public Future<?> start() {
    vertx.eventBus().<JsonObject>consumer(BusAddresses.NODE_HEARTBEAT, this::heartbeat);
    vertx.eventBus().<JsonObject>consumer(BusAddresses.TASK_CLAIM, this::claim);
    vertx.eventBus().<JsonObject>consumer(BusAddresses.TASK_REPORT, this::report);
    vertx.setPeriodic(Math.max(1000, offlineGraceSeconds * 1000L / 3), id -> leaderOnly(() -> services.nodes()
        .markSilentNodesOffline(offlineGraceSeconds)
        .onSuccess(sweep -> {
          sweep.markedOffline().forEach(node -> LOG.info("node " + node + " is offline: no heartbeat for "
              + offlineGraceSeconds + " s"));
          if (sweep.everyNodeSilent()) {
            services.metrics().massSilence();
            LOG.warning("every node went silent at once: treated as a control-plane-side disruption, none marked"
                + " offline");
          }
        })
        .onFailure(e -> LOG.log(Level.FINE, "offline sweep failed", e))));
    vertx.setPeriodic(ledgerCheckMs, id -> leaderOnly(() -> services.nodes().reconcileLedger()
        .onSuccess(corrections -> corrections.forEach(correction -> {
          services.metrics().ledgerDiscrepancy();
          LOG.warning("GPU ledger of node " + correction.nodeId() + " said " + correction.recorded()
              + " cards in use, its active tasks hold " + correction.actual() + ": corrected");
        }))
        .onFailure(e -> LOG.log(Level.FINE, "ledger check failed", e))));
    return Future.succeededFuture();
  }

  /** The sweeps write; one member (the leader) runs them, the others would only repeat its work. */
  private void leaderOnly(Runnable sweep) {
    if (services.leadership().leading()) {
      sweep.run();
    }
  }

  private void heartbeat(Message<JsonObject> message) {
    JsonObject body = message.body();
    String nodeId = body == null ? null : body.getString("node_id");
    if (nodeId == null || !NODE_ID.matcher(nodeId).matches()) {
      message.fail(BAD_REQUEST, "node_id: required, " + NODE_ID.pattern());
      return;
    }
    services.nodes().applyHeartbeat(body)
        .compose(applied -> services.tasks().tasksForAgent(nodeId)
            .map(tasks -> AgentMessages.reconciliation(applied, tasks)))
        .onSuccess(message::reply)
        .onFailure(e -> fail(message, "heartbeat of " + nodeId, e));
  }

  private void claim(Message<JsonObject> message) {
    JsonObject body = message.body();
    withTask(message, body).compose(task -> {
      boolean ownNode = body.getString("node_id", "").equals(task.nodeId());
      if (ownNode && task.status() == TaskStatus.RUNNING && body.getBoolean("retry", false)) {
        // the agent's first claim went through but its reply was lost: the agent has not started it
        return Future.succeededFuture(new JsonObject().put("claimed", true));
      }
      if (task.status() != TaskStatus.SCHEDULED || !ownNode) {
        return Future.succeededFuture(new JsonObject().put("claimed", false).put("status", task.status().wire()));
      }
      return services.tasks().transition(task.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)
          .map(won -> new JsonObject().put("claimed", won));
    }).onSuccess(message::reply).onFailure(e -> fail(message, "claim", e));
  }

  private void report(Message<JsonObject> message) {
    JsonObject body = message.body();
    TaskStatus outcome;
    try {
      outcome = TaskStatus.fromWire(body.getString("outcome", ""));
    } catch (IllegalArgumentException e) {
      message.fail(BAD_REQUEST, "outcome: one of succeeded, failed, stopped");
      return;
    }
    TaskStore.Details details = new TaskStore.Details(body.getInteger("exit_code"), body.getString("log_tail"),
        body.getString("reason_code"), body.getString("message"));
    withTask(message, body).compose(task -> settle(task, body.getString("node_id", ""), outcome, details, 3))
        .onSuccess(settled -> {
          message.reply(new JsonObject().put("settled", settled));
          if (settled) {
            vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, new JsonObject().put("reason", "resources freed"));
          }
        })
        .onFailure(e -> fail(message, "report", e));
  }

  private Future<Boolean> settle(TaskRecord task, String nodeId, TaskStatus outcome, TaskStore.Details details,
                                 int attemptsLeft) {
    TaskStatus target = task.status().settleWith(outcome);
    if (target == null || !nodeId.equals(task.nodeId())) {
      return Future.succeededFuture(false);
    }
    return services.tasks().transition(task.id(), task.status(), target, details).compose(won -> {
      if (won || attemptsLeft == 0) {
        return Future.succeededFuture(won);
      }
      return services.tasks().get(task.id())
          .compose(fresh -> settle(fresh.orElseThrow(), nodeId, outcome, details, attemptsLeft - 1));
    });
  }

  private Future<TaskRecord> withTask(Message<JsonObject> message, JsonObject body) {
    UUID id;
    try {
      id = UUID.fromString(body.getString("task_id", ""));
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("task_id: not a task id"));
    }
    return services.tasks().get(id)
        .map(found -> found.orElseThrow(() -> new IllegalArgumentException("task_id: no task " + id)));
  }

  private static void fail(Message<JsonObject> message, String what, Throwable e) {
    if (e instanceof IllegalArgumentException) {
      message.fail(BAD_REQUEST, e.getMessage());
    } else {
      LOG.log(Level.WARNING, what + " failed", e);
      message.fail(503, what + " failed: " + e.getMessage());
    }
  }
}
