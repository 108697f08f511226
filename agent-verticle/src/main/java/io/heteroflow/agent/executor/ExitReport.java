package io.heteroflow.agent.executor;

import io.heteroflow.protocol.TaskStatus;

/** How a task's process ended, as the agent saw it. {@code outcome} is succeeded, failed or stopped. */
public record ExitReport(TaskStatus outcome, Integer exitCode, String reasonCode, String message, String logTail) {
}
