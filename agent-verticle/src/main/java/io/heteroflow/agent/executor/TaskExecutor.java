package io.heteroflow.agent.executor;

import io.vertx.core.Future;

/** Runs tasks on this host. Implementations: {@link ProcessExecutor} (local processes); docker arrives later. */
public interface TaskExecutor {
  /** Starts the task; the future completes (on the caller's context) when its process has ended. */
  Future<ExitReport> start(RunSpec spec);

  /** Asks a running task to stop (SIGTERM, grace, SIGKILL); false when this executor is not running it. */
  boolean stop(String taskId);

  /** Up to the last {@code maxBytes} of the task's combined stdout and stderr; empty when unknown. */
  String logs(String taskId, int maxBytes);

  /** Frees the worker pool. */
  void close();
}
