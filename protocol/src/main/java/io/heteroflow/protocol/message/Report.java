package io.heteroflow.protocol.message;

import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Set;
import java.util.UUID;

/**
 * agent → control plane: a task's process ended ({@code outcome} succeeded, failed or stopped, as the agent saw
 * it), with its exit code, reason, message, log tail and, for a task with a checkpoint handshake, when it last
 * wrote its checkpoint file; {@code attempt} is the Run's (null when the agent never ran it, e.g. a stop of a
 * task it does not know). The control plane settles it by CAS, and not at all when the attempt is not the
 * task's current one (a late report of a run that was preempted and forced back to the queue).
 */
public record Report(UUID taskId, String nodeId, TaskStatus outcome, Integer exitCode, String reasonCode,
                     String message, String logTail, Instant lastCheckpointAt, Integer attempt) implements BusMessage {
  private static final Set<TaskStatus> OUTCOMES = EnumSet.of(TaskStatus.SUCCEEDED, TaskStatus.FAILED,
      TaskStatus.STOPPED);

  public Report {
    if (!OUTCOMES.contains(outcome)) {
      throw new IllegalArgumentException("outcome: one of succeeded, failed, stopped, not " + outcome);
    }
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString()).put("node_id", nodeId)
        .put("outcome", outcome.wire()).put("exit_code", exitCode).put("reason_code", reasonCode)
        .put("message", message).put("log_tail", logTail)
        .put("last_checkpoint_at", lastCheckpointAt == null ? null : lastCheckpointAt.toString())
        .put("attempt", attempt);
  }

  public static Report fromJson(JsonObject json) {
    BusPayload report = BusMessage.versioned(json);
    UUID taskId = report.uuid("task_id");
    String nodeId = report.requiredString("node_id");
    String wire = report.requiredString("outcome");
    TaskStatus outcome = OUTCOMES.stream().filter(status -> status.wire().equals(wire)).findFirst()
        .orElseThrow(() -> report.bad("outcome", "one of succeeded, failed, stopped"));
    String checkpointed = report.optionalString("last_checkpoint_at");
    Instant lastCheckpointAt;
    try {
      lastCheckpointAt = checkpointed == null ? null : Instant.parse(checkpointed);
    } catch (java.time.format.DateTimeParseException e) {
      throw report.bad("last_checkpoint_at", "an ISO-8601 instant is required, got " + checkpointed);
    }
    return new Report(taskId, nodeId, outcome, report.optionalInteger("exit_code"),
        report.optionalString("reason_code"), report.optionalText("message"), report.optionalText("log_tail"),
        lastCheckpointAt, report.optionalInteger("attempt"));
  }

  /** The answer: whether this report settled the task (false for a late or repeated one). */
  public record Answer(boolean settled) implements BusMessage {
    @Override
    public JsonObject toJson() {
      return BusMessage.envelope().put("settled", settled);
    }

    public static Answer fromJson(JsonObject json) {
      return new Answer(BusMessage.versioned(json).bool("settled", false));
    }
  }
}
