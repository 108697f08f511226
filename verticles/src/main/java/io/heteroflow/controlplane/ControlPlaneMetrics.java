package io.heteroflow.controlplane;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/** The scheduler's own series on {@code /metrics} (Prometheus naming, prefix {@code heteroflow_}). */
public final class ControlPlaneMetrics {
  private final MeterRegistry registry;
  private final Timer roundDuration;
  private final Timer createToScheduled;
  private final Counter binds;
  private final Counter bindConflicts;
  private final Counter tasksCreated;
  private final Counter ledgerDiscrepancies;
  private final Timer heartbeatWrites;
  private final java.util.concurrent.atomic.AtomicInteger bridgeConnections = new java.util.concurrent.atomic.AtomicInteger();

  public ControlPlaneMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.roundDuration = Timer.builder("heteroflow_round_duration").description("one scheduling round")
        .publishPercentileHistogram().register(registry);
    this.createToScheduled = Timer.builder("heteroflow_create_to_scheduled")
        .description("from task creation to its bind").publishPercentileHistogram().register(registry);
    this.binds = Counter.builder("heteroflow_binds").description("tasks bound to a node").register(registry);
    this.bindConflicts = Counter.builder("heteroflow_bind_conflicts")
        .description("binds rolled back because another binder won a task or a card").register(registry);
    this.tasksCreated = Counter.builder("heteroflow_tasks_submitted").description("tasks accepted by the API").register(registry);
    this.ledgerDiscrepancies = Counter.builder("heteroflow_ledger_discrepancies")
        .description("nodes whose real-time GPU ledger disagreed with the heartbeat ledger (corrected)")
        .register(registry);
    this.heartbeatWrites = Timer.builder("heteroflow_heartbeat_write").description("from a heartbeat's receipt by the"
        + " registry to its commit in PostgreSQL").publishPercentileHistogram().register(registry);
    io.micrometer.core.instrument.Gauge.builder("heteroflow_agent_bridge_connections", bridgeConnections::get)
        .description("agent connections open on this member's agent bridge").register(registry);
  }

  /** A heartbeat's way from the registry's receipt to its commit in PostgreSQL (batched with others). */
  public void heartbeatWritten(long nanos) {
    heartbeatWrites.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /** The agent bridge refused a frame: {@code reason} node_id, address, publish or certificate. */
  public void agentBridgeRefusal(String reason) {
    Counter.builder("heteroflow_agent_bridge_refusals").description("agent bridge frames refused, by reason")
        .tag("reason", reason).register(registry).increment();
  }

  /** An agent-bridge connection opened (+1) or closed (-1), on any of the bridge's instances. */
  public void agentBridgeConnections(int delta) {
    bridgeConnections.addAndGet(delta);
  }

  public void attempt(String result, String reason) {
    Counter.builder("heteroflow_scheduling_attempts").description("scheduling attempts by result and reason")
        .tag("result", result).tag("reason", reason == null ? "none" : reason).register(registry).increment();
  }

  public void round(Duration duration) {
    roundDuration.record(duration);
  }

  /** A task bound {@code sinceCreation} after it was created, in {@code queue} ({@code heteroflow_queue_wait_seconds}). */
  public void bound(Duration sinceCreation, String queue) {
    Duration waited = sinceCreation.isNegative() ? Duration.ZERO : sinceCreation;
    binds.increment();
    createToScheduled.record(waited);
    Timer.builder("heteroflow_queue_wait").description("creation → bind, per queue").tag("queue", String.valueOf(queue))
        .publishPercentileHistogram().register(registry).record(waited);
  }

  /**
   * A task of {@code queue} placed on a node that holds another task's or group's reservation (SPEC §13:
   * backfill), counted when the round stages it ({@code heteroflow_backfilled_tasks_total}).
   */
  public void backfilled(String queue) {
    Counter.builder("heteroflow_backfilled_tasks").description("tasks started on a node reserved for other work"
        + " (backfill), per queue").tag("queue", String.valueOf(queue)).register(registry).increment();
  }

  public void bindConflict() {
    bindConflicts.increment();
  }

  /** Binds this member ran that the term fence refused: their leader's term was no longer the current one. */
  public void fencedBinds(int count) {
    Counter.builder("heteroflow_binds_fenced")
        .description("binds refused by the term fence (the binder's leader term was no longer current)")
        .register(registry).increment(count);
  }

  /**
   * {@code heteroflow_preemptions_total{result}}: what became of preemptions (planned, settled,
   * forced_by_watchdog, none_sufficient).
   */
  public void preemptions(String result, int count) {
    Counter.builder("heteroflow_preemptions").description("preemptions by what became of them")
        .tag("result", result).register(registry).increment(count);
  }

  /** {@code heteroflow_queue_reclaims_total{queue}}: reclaim plans carried out for a queue below its guarantee. */
  public void reclaim(String queue) {
    Counter.builder("heteroflow_queue_reclaims").description("reclaims of borrowed capacity carried out, by the"
        + " queue that takes it back").tag("queue", queue).register(registry).increment();
  }

  /**
   * {@code heteroflow_groups_total{result}}: task groups by what a round or their lifecycle did with them (placed,
   * incomplete, rolled_back, restarted, succeeded, failed, stopped).
   */
  public void groups(String result) {
    Counter.builder("heteroflow_groups").description("task groups by what became of them").tag("result", result)
        .register(registry).increment();
  }

  /** {@code heteroflow_group_decision_seconds}: how long deciding one group as a unit took (placed or not). */
  public void groupDecision(Duration duration) {
    Timer.builder("heteroflow_group_decision").description("deciding one task group as a unit")
        .publishPercentileHistogram().register(registry).record(duration);
  }

  /** {@code heteroflow_preemption_victims_total}: tasks moved to preempting by a plan. */
  public void preemptionVictims(int count) {
    Counter.builder("heteroflow_preemption_victims").description("tasks preempted to make room (plans carried out)")
        .register(registry).increment(count);
  }

  /** {@code heteroflow_preemption_duration_seconds}: from preempting to settled (confirmed or forced). */
  public void preemptingFor(Duration duration) {
    Timer.builder("heteroflow_preemption_duration").description("how long victims stayed preempting")
        .publishPercentileHistogram().register(registry).record(duration.isNegative() ? Duration.ZERO : duration);
  }

  /** An offline sweep found every node silent at once and evicted none. */
  public void massSilence() {
    Counter.builder("heteroflow_mass_silence_sweeps")
        .description("offline sweeps that found every node silent at once and marked none offline")
        .register(registry).increment();
  }

  /** This member saw a new leader term (its own or another member's). */
  public void leaderChanged() {
    Counter.builder("heteroflow_leader_changes").description("leader terms this member has seen begin")
        .register(registry).increment();
  }

  public void ledgerDiscrepancy() {
    ledgerDiscrepancies.increment();
  }

  public void taskCreated() {
    tasksCreated.increment();
  }

  /** A replica re-created after it failed, was lost or went missing (inference rebuild). */
  public void replicaRebuilt(String service) {
    Counter.builder("heteroflow_replica_rebuilds").description("inference replicas re-created, by service")
        .tag("service", service).register(registry).increment();
  }

  /** An autoscaler decision that changed a service's replica count ({@code direction} up or down). */
  public void autoscaled(String service, String direction) {
    Counter.builder("heteroflow_autoscale_decisions").description("autoscaler changes of replica counts")
        .tag("service", service).tag("direction", direction).register(registry).increment();
  }

  /** A schedule-window action carried out ({@code action}: pause, scale, stop, restore) or skipped. */
  public void windowAction(String service, String action) {
    Counter.builder("heteroflow_window_actions").description("schedule-window actions, by service and action")
        .tag("service", service).tag("action", action).register(registry).increment();
  }
}
