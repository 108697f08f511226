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

  /**
   * A range of the task's combined stdout and stderr (see {@link TaskLog#read}): up to {@code maxBytes} from
   * {@code offset}, or the last {@code tailBytes}, or from the first byte kept; not found when unknown.
   */
  TaskLog.Chunk logs(String taskId, Long offset, int maxBytes, Long tailBytes);

  /** Up to the last {@code maxBytes} of the task's log as text; empty when unknown. */
  default String logs(String taskId, int maxBytes) {
    return logs(taskId, null, maxBytes, (long) maxBytes).text();
  }

  /** Stops every running task (as {@link #stop} does) and frees the worker threads. */
  void close();
}
