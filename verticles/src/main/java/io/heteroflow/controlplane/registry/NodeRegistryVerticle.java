package io.heteroflow.controlplane.registry;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.store.NodeHeldException;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Beat;
import io.heteroflow.protocol.message.BusPayload;
import io.heteroflow.protocol.message.Claim;
import io.heteroflow.protocol.message.FailureCode;
import io.heteroflow.protocol.message.Heartbeat;
import io.heteroflow.protocol.message.Kick;
import io.heteroflow.protocol.message.Reconciliation;
import io.heteroflow.protocol.message.Release;
import io.heteroflow.protocol.message.Report;
import io.heteroflow.protocol.message.Run;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The control plane's side of the agents: applies heartbeats (newest sequence wins, liveness by receipt
 * time), answers with what each agent should run or stop, claims tasks scheduled → running for agents and
 * settles their results by CAS, so a late or duplicated report can never settle twice.
 */
public final class NodeRegistryVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(NodeRegistryVerticle.class.getName());
  private final NodeStore nodes;
  private final TaskStore tasks;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final int offlineGraceSeconds;
  private final long ledgerCheckMs;

  public NodeRegistryVerticle(NodeStore nodes, TaskStore tasks, Leadership leadership, ControlPlaneMetrics metrics,
                              int offlineGraceSeconds, long ledgerCheckMs) {
    this.nodes = nodes;
    this.tasks = tasks;
    this.leadership = leadership;
    this.metrics = metrics;
    this.offlineGraceSeconds = offlineGraceSeconds;
    this.ledgerCheckMs = ledgerCheckMs;
  }

  /** Completes once the five consumers are registered (on the clustered bus: known to every member). */
  @Override
  public Future<?> start() {
    Future<Void> consumers = Future.all(
        vertx.eventBus().consumer(BusAddresses.NODE_HEARTBEAT,
            message -> BusPayload.answer(message, Heartbeat::fromJson, this::heartbeat)).completion(),
        vertx.eventBus().consumer(BusAddresses.NODE_BEAT,
            message -> BusPayload.answer(message, Beat::fromJson, this::beat)).completion(),
        vertx.eventBus().consumer(BusAddresses.NODE_RELEASE,
            message -> BusPayload.answer(message, Release::fromJson, this::release)).completion(),
        vertx.eventBus().consumer(BusAddresses.TASK_CLAIM,
            message -> BusPayload.answer(message, Claim::fromJson, this::claim)).completion(),
        vertx.eventBus().consumer(BusAddresses.TASK_REPORT,
            message -> BusPayload.answer(message, Report::fromJson, this::report)).completion()).mapEmpty();
    vertx.setPeriodic(Math.max(1000, offlineGraceSeconds * 1000L / 3), id -> leaderOnly(() -> nodes
        .markSilentNodesOffline(offlineGraceSeconds)
        .onSuccess(sweep -> {
          sweep.markedOffline().forEach(node -> LOG.info("node " + node + " is offline: no heartbeat for "
              + offlineGraceSeconds + " s"));
          if (sweep.everyNodeSilent()) {
            metrics.massSilence();
            LOG.warning("every node went silent at once: treated as a control-plane-side disruption, none marked"
                + " offline");
          }
        })
        .onFailure(e -> LOG.log(Level.FINE, "offline sweep failed", e))));
    vertx.setPeriodic(ledgerCheckMs, id -> leaderOnly(() -> nodes.reconcileLedger()
        .onSuccess(corrections -> corrections.forEach(correction -> {
          metrics.ledgerDiscrepancy();
          LOG.warning("GPU ledger of node " + correction.nodeId() + " said " + correction.recorded()
              + " cards in use, its active tasks hold " + correction.actual() + ": corrected");
        }))
        .onFailure(e -> LOG.log(Level.FINE, "ledger check failed", e))));
    return consumers;
  }

  /** The sweeps write; one member (the leader) runs them, the others would only repeat its work. */
  private void leaderOnly(Runnable sweep) {
    if (leadership.leading()) {
      sweep.run();
    }
  }

  private Future<Reconciliation> heartbeat(Heartbeat beat) {
    long received = System.nanoTime();
    return reconcile(beat.nodeId(), beat.activeTasks(), nodes.heartbeat(beat)
        .onComplete(written -> metrics.heartbeatWritten(System.nanoTime() - received))
        .recover(e -> Future.failedFuture(e instanceof NodeHeldException
            ? FailureCode.CONFLICT.refusal(e.getMessage()) : e))); // another agent process holds the node: no work
  }

  /**
   * A liveness-only beat: renews the node's lease and answers as a heartbeat does. One not applied (not the holder,
   * the node offline or unknown, or not newer) answers {@code applied: false} with nothing to run: the agent's full
   * heartbeat that follows is answered in full (or refused as held).
   */
  private Future<Reconciliation> beat(Beat beat) {
    long received = System.nanoTime();
    Future<NodeStore.HeartbeatOutcome> written = nodes.beat(beat)
        .onComplete(done -> metrics.heartbeatWritten(System.nanoTime() - received));
    return written.compose(outcome -> outcome.applied() ? reconcile(beat.nodeId(), beat.activeTasks(), written)
        : Future.succeededFuture(new Reconciliation(false, List.of(), List.of())));
  }

  /** After a written heartbeat or beat: the lost tasks settled, then what the agent should run and stop. */
  private Future<Reconciliation> reconcile(String nodeId, List<String> activeTasks,
                                           Future<NodeStore.HeartbeatOutcome> written) {
    return written.compose(outcome -> settleLost(nodeId, outcome.lostTasks())
        .compose(v -> tasks.forAgent(nodeId, activeTasks)
            .map(view -> reconciliation(outcome.applied(), view.assigned(), view.orphans()))));
  }

  /** An agent process stopping cleanly lets go of its node (cleared only when it is the holder). */
  private Future<Release.Answer> release(Release release) {
    return nodes.release(release.nodeId(), release.bootId()).map(Release.Answer::new);
  }

  /**
   * What the agent should be running or stopping according to PostgreSQL: the node's scheduled tasks to run, its
   * stopping and preempting ones to stop, and the tasks the agent says it runs that are no longer active on the
   * node ({@code orphans}) — e.g. a preemption the watchdog forced while the agent was frozen: their cards are
   * already someone else's.
   */
  private static Reconciliation reconciliation(boolean applied, List<TaskRecord> tasks, List<UUID> orphans) {
    List<Run> run = new ArrayList<>();
    List<UUID> stop = new ArrayList<>(orphans);
    for (TaskRecord task : tasks) {
      switch (task.status()) {
        case SCHEDULED -> run.add(task.run());
        case STOPPING, PREEMPTING -> stop.add(task.id());
        default -> { }
      }
    }
    return new Reconciliation(applied, run, stop);
  }

  /**
   * Fails the running tasks the agent of {@code nodeId} has not reported in two heartbeats, through the same CAS and
   * release as a report: {@code AgentRestarted} when they started before its current boot, {@code NotRunningOnAgent}
   * when this agent process forgot them (it gave up a claim whose answers were lost); a failed settlement is repeated
   * by the next heartbeat.
   */
  private Future<Void> settleLost(String nodeId, List<NodeStore.LostTask> lost) {
    if (lost.isEmpty()) {
      return Future.succeededFuture();
    }
    List<Future<Boolean>> settled = lost.stream().map(task -> tasks.transition(task.id(), TaskStatus.RUNNING,
        TaskStatus.FAILED, task.restarted()
            ? new TaskStore.Details(null, null, "AgentRestarted", "the agent of node " + nodeId
                + " restarted and did not report the task in two heartbeats: its process is gone")
            : new TaskStore.Details(null, null, "NotRunningOnAgent", "the agent of node " + nodeId
                + " did not report the task in two heartbeats: it does not run it (its start was lost, e.g. its"
                + " claim's answers timed out)"))).toList();
    return Future.join(settled).transform(done -> {
      long count = settled.stream().filter(f -> f.succeeded() && f.result()).count();
      if (count > 0) {
        LOG.info("node " + nodeId + ": " + count + " running task(s) its agent does not run settled as failed");
        vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("resources freed").toJson());
      }
      settled.stream().filter(Future::failed).findFirst().ifPresent(f -> LOG.log(Level.WARNING,
          "settling a lost task failed", f.cause()));
      return Future.succeededFuture();
    });
  }

  private Future<Claim.Answer> claim(Claim claim) {
    return task(claim.taskId()).compose(task -> {
      boolean ownNode = claim.nodeId().equals(task.nodeId());
      if (ownNode && task.status() == TaskStatus.RUNNING && claim.retry()) {
        // the agent's first claim went through but its reply was lost: the agent has not started it
        return Future.succeededFuture(new Claim.Answer(true, null));
      }
      if (task.status() != TaskStatus.SCHEDULED || !ownNode) {
        return Future.succeededFuture(new Claim.Answer(false, task.status().wire()));
      }
      return tasks.transition(task.id(), TaskStatus.SCHEDULED, TaskStatus.RUNNING, TaskStore.Details.NONE)
          .map(won -> {
            groupMemberMoved(task, won);
            return new Claim.Answer(won, null);
          });
    });
  }

  private Future<Report.Answer> report(Report report) {
    TaskStore.Details details = new TaskStore.Details(report.exitCode(), report.logTail(), report.reasonCode(),
        report.message(), report.lastCheckpointAt() == null ? null
            : report.lastCheckpointAt().atOffset(java.time.ZoneOffset.UTC));
    return task(report.taskId()).compose(task -> report.attempt() != null && report.attempt() != task.preemptCount()
            ? Future.succeededFuture(false) // a run before the task's last preemption: settled already
            : settle(task, report.nodeId(), report.outcome(), details, 3))
        .map(settled -> {
          if (settled) {
            vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("resources freed").toJson());
          }
          return new Report.Answer(settled);
        });
  }

  private Future<Boolean> settle(TaskRecord task, String nodeId, TaskStatus outcome, TaskStore.Details details,
                                 int attemptsLeft) {
    TaskStatus target = task.status().settleWith(outcome);
    if (target == null || !nodeId.equals(task.nodeId())) {
      return Future.succeededFuture(false);
    }
    boolean preempted = task.status() == TaskStatus.PREEMPTING;
    TaskStore.Details settled = preempted ? new TaskStore.Details(details.exitCode(), details.logTail(), "Preempted",
        "preempted on node " + nodeId + " (its agent confirmed the stop): back in the queue",
        details.lastCheckpointAt()) : details;
    return tasks.transition(task.id(), task.status(), target, settled).compose(won -> {
      groupMemberMoved(task, won);
      if (won && preempted) {
        metrics.preemptions("settled", 1);
        if (task.preemptingSince() != null) {
          metrics.preemptingFor(java.time.Duration.between(task.preemptingSince().toInstant(),
              java.time.Instant.now()));
        }
      }
      if (won || attemptsLeft == 0) {
        return Future.succeededFuture(won);
      }
      return tasks.get(task.id())
          .compose(fresh -> settle(fresh.orElseThrow(), nodeId, outcome, details, attemptsLeft - 1));
    });
  }

  /** A group member that moved wakes the group lifecycle (its own beat would find it a little later). */
  private void groupMemberMoved(TaskRecord task, boolean moved) {
    if (moved && task.groupId() != null) {
      vertx.eventBus().publish(BusAddresses.GROUPS_KICK, Kick.because("member moved").toJson());
    }
  }

  /** The task, or a 404 failure. */
  private Future<TaskRecord> task(UUID id) {
    return tasks.get(id).compose(found -> found.map(Future::succeededFuture)
        .orElseGet(() -> Future.failedFuture(FailureCode.NOT_FOUND.refusal("task_id: no task " + id))));
  }
}
