package io.heteroflow.agent.executor;

import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Runs each task's command as a local process on a worker pool of its own (never on an event loop), with
 * stdout and stderr captured to a log file. Stop: SIGTERM to the process, a grace period, then SIGKILL.
 * A task that outlives its timeout is stopped the same way and fails.
 */
public final class ProcessExecutor implements TaskExecutor {
  public static final int LOG_TAIL_BYTES = 64 * 1024;

  private final Vertx vertx;
  private final Path logDir;
  private final Duration grace;
  private final ExecutorService workers;
  /** Stops and helper commands: never queued behind the running tasks that occupy every worker. */
  private final ExecutorService control = Executors.newCachedThreadPool(runnable -> {
    Thread thread = new Thread(runnable, "heteroflow-task-control");
    thread.setDaemon(true);
    return thread;
  });
  private final Map<String, Running> running = new ConcurrentHashMap<>();

  private static final class Running {
    volatile Process process;
    volatile boolean stopRequested;
  }

  public ProcessExecutor(Vertx vertx, Path logDir, int workerCount, Duration grace) {
    this.vertx = vertx;
    this.logDir = logDir;
    this.grace = grace;
    this.workers = Executors.newFixedThreadPool(workerCount, runnable -> {
      Thread thread = new Thread(runnable, "heteroflow-task-worker");
      thread.setDaemon(true);
      return thread;
    });
  }

  /** SPEC §7: cores / 2, at least 2, at most 32. */
  public static int workerCountFor(int cores) {
    return Math.max(2, Math.min(32, cores / 2));
  }

  @Override
  public Future<ExitReport> start(RunSpec spec) {
    Context context = vertx.getOrCreateContext();
    Promise<ExitReport> promise = Promise.promise();
    Running entry = new Running();
    running.put(spec.taskId(), entry);
    workers.execute(() -> {
      ExitReport report = run(spec, entry);
      running.remove(spec.taskId());
      context.runOnContext(v -> promise.complete(report));
    });
    return promise.future();
  }

  private ExitReport run(RunSpec spec, Running entry) {
    Path log = logFile(spec.taskId());
    if (spec.command().isEmpty()) {
      return new ExitReport(TaskStatus.FAILED, null, "StartFailed",
          "the process executor needs a command (image " + spec.image() + " needs the docker executor)", "");
    }
    try {
      Files.createDirectories(logDir);
      ProcessBuilder builder = new ProcessBuilder(spec.command()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      builder.environment().putAll(spec.env());
      if (entry.stopRequested) {
        return new ExitReport(TaskStatus.STOPPED, null, "StoppedByUser", "stopped before it started", "");
      }
      entry.process = builder.start();
      if (entry.stopRequested) {
        // a stop arrived while the process was being started: stop() saw no process to signal
        Process started = entry.process;
        control.execute(() -> terminate(started));
      }
      boolean finished = entry.process.waitFor(spec.timeoutSeconds(), TimeUnit.SECONDS);
      if (!finished) {
        terminate(entry.process);
        return new ExitReport(TaskStatus.FAILED, exitCode(entry.process), "TimedOut",
            "timed out after " + spec.timeoutSeconds() + " s", tail(log, LOG_TAIL_BYTES));
      }
      int exit = entry.process.exitValue();
      if (entry.stopRequested) {
        return new ExitReport(TaskStatus.STOPPED, exit, "StoppedByUser", "stopped (exit code " + exit + ")",
            tail(log, LOG_TAIL_BYTES));
      }
      return new ExitReport(exit == 0 ? TaskStatus.SUCCEEDED : TaskStatus.FAILED, exit, exit == 0 ? null : "ExitCode",
          "exited with code " + exit, tail(log, LOG_TAIL_BYTES));
    } catch (IOException e) {
      return new ExitReport(TaskStatus.FAILED, null, "StartFailed", "cannot start: " + e.getMessage(), tail(log, LOG_TAIL_BYTES));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (entry.process != null) {
        terminate(entry.process);
      }
      return new ExitReport(TaskStatus.FAILED, null, "AgentShutdown", "the agent shut down", tail(log, LOG_TAIL_BYTES));
    }
  }

  @Override
  public boolean stop(String taskId) {
    Running entry = running.get(taskId);
    if (entry == null) {
      return false;
    }
    entry.stopRequested = true;
    Process process = entry.process;
    if (process != null) {
      control.execute(() -> terminate(process));
    }
    return true;
  }

  /**
   * SIGTERM to the task's process (like {@code docker stop} to PID 1), up to the grace period for it to exit,
   * then SIGKILL to it and to every process it started that is still alive, so nothing outlives the task.
   */
  private void terminate(Process process) {
    List<ProcessHandle> tree = process.descendants().toList();
    process.destroy();
    try {
      if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
    tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  private static Integer exitCode(Process process) {
    return process.isAlive() ? null : process.exitValue();
  }

  /** Runs a helper command (e.g. {@code docker stop}) on the worker pool without waiting for it. */
  void runDetached(List<String> command) {
    control.execute(() -> {
      try {
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start().waitFor(grace.toSeconds() + 30, TimeUnit.SECONDS);
      } catch (IOException e) {
        // the CLI is missing: the signal sent to the task's process is all we can do
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
  }

  @Override
  public String logs(String taskId, int maxBytes) {
    return tail(logFile(taskId), maxBytes);
  }

  private Path logFile(String taskId) {
    return logDir.resolve(taskId.replaceAll("[^A-Za-z0-9-]", "_") + ".log");
  }

  static String tail(Path file, int maxBytes) {
    if (!Files.exists(file)) {
      return "";
    }
    try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
      long length = in.length();
      long from = Math.max(0, length - maxBytes);
      byte[] bytes = new byte[(int) (length - from)];
      in.seek(from);
      in.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public void close() {
    running.values().forEach(entry -> entry.stopRequested = true);
    running.values().stream().map(entry -> entry.process).filter(p -> p != null).forEach(this::terminate);
    workers.shutdownNow();
    control.shutdownNow();
  }
}
