package io.heteroflow.agent.executor;

import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;

/**
 * How a task's process ended, as the agent saw it. {@code outcome} is succeeded, failed or stopped;
 * {@code lastCheckpointAt} when the task last wrote its checkpoint file (null: never, or no handshake).
 */
public record ExitReport(TaskStatus outcome, Integer exitCode, String reasonCode, String message, String logTail,
                         Instant lastCheckpointAt) {
  public ExitReport(TaskStatus outcome, Integer exitCode, String reasonCode, String message, String logTail) {
    this(outcome, exitCode, reasonCode, message, logTail, null);
  }

  public ExitReport withLastCheckpoint(Instant at) {
    return new ExitReport(outcome, exitCode, reasonCode, message, logTail, at);
  }
}
