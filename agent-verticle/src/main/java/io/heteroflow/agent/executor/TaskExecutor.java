package io.heteroflow.agent.executor;

import io.vertx.core.Future;

/**
 * Runs tasks on this host: {@link ProcessExecutor} (local processes, each in its own process group) or
 * {@link DockerExecutor} (a container through the docker CLI, run by a ProcessExecutor underneath).
 */
public interface TaskExecutor {
  /**
   * Starts the task; the future completes (on the caller's context) when its process has ended, with how it
   * ended: a task that could not start is a FAILED report ("StartFailed"), not a failed future.
   */
  Future<ExitReport> start(RunSpec spec);

  /** Asks a running task to stop (SIGTERM, grace, SIGKILL); false when this executor is not running it. */
  boolean stop(String taskId);

  /** Up to the last {@code maxBytes} of the task's combined stdout and stderr; empty when unknown. */
  String logs(String taskId, int maxBytes);

  /** Stops every running task (as {@link #stop} does) and frees the worker threads. */
  void close();
}
