package io.heteroflow.agent.executor;

import io.heteroflow.protocol.TaskEnvironment;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Checkpoint;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * Runs each task's command as a local process on a worker pool of its own (never on an event loop), with
 * stdout and stderr captured to a log file. Each task is a process group of its own ({@link ProcessGroup}).
 * Its environment starts empty: {@link TaskEnvironment#FROM_HOST} from the agent's host, a private
 * {@code HOME} and {@code TMPDIR} under {@code <log dir>/work/<task>/} (removed when the task ends), then
 * the spec's variables. Stop: SIGTERM to the group, a grace period, then SIGKILL to the group. A task that
 * outlives its timeout is stopped the same way and fails; when the main process exits on its own, what it
 * left running in its group is stopped the same way before the task ends. With {@link TaskUsers} that switch, the
 * task runs as its tenant's uid ({@code setpriv --reuid U --regid U --clear-groups}) in its own work directory
 * {@code <log dir>/work/<task>/} and log directory {@code <log dir>/logs/<task>/}, both 0700 and owned by that uid;
 * its output goes through the agent into a {@link TaskLog} bounded at {@code logCapBytes}.
 */
public final class ProcessExecutor implements TaskExecutor {
  public static final int LOG_TAIL_BYTES = 64 * 1024;
  /** {@code --log-cap-mib 64}: the most of one task's log an agent keeps (the newest bytes). */
  public static final long DEFAULT_LOG_CAP_BYTES = 64L << 20;
  private static final String SETPRIV = "/usr/bin/setpriv";
  private static final Logger LOG = Logger.getLogger(ProcessExecutor.class.getName());

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
  private final Map<String, TaskLog> writing = new ConcurrentHashMap<>();
  private final TaskUsers users;
  private final long logCapBytes;

  private static final class Running {
    volatile Process process;
    volatile boolean stopRequested;
    final Runnable onTerminate;
    /** SIGTERM, then this long, then SIGKILL: the task's own grace, else the executor's. */
    final Duration grace;
    /** The task's checkpoint handshake (null: none), and the file it writes to answer it (null: no sandbox). */
    final Checkpoint checkpoint;
    volatile Path checkpointFile;
    /** Guarded by this: the group has been ended (stopped, timed out, or cleaned up after the main process). */
    boolean ended;

    Running(Runnable onTerminate, Duration grace, Checkpoint checkpoint) {
      this.onTerminate = onTerminate;
      this.grace = grace;
      this.checkpoint = checkpoint;
    }
  }

  /** Tasks run as the agent's user, with the default log cap. */
  public ProcessExecutor(Vertx vertx, Path logDir, int workerCount, Duration grace) {
    this(vertx, logDir, workerCount, grace, TaskUsers.none(), DEFAULT_LOG_CAP_BYTES);
  }

  public ProcessExecutor(Vertx vertx, Path logDir, int workerCount, Duration grace, TaskUsers users,
                         long logCapBytes) {
    this.users = users;
    this.logCapBytes = logCapBytes;
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
    return start(spec, TaskEnvironment.fromHost(System.getenv()), true, null);
  }

  /**
   * Starts a client command that runs the task elsewhere (the docker CLI): its environment is
   * {@code clientEnv} (then the spec's, which a client gets empty) with no per-task directories, and
   * {@code onTerminate} runs when the task is stopped, times out or the agent shuts down.
   */
  Future<ExitReport> startClient(RunSpec spec, Map<String, String> clientEnv, Runnable onTerminate) {
    return start(spec, clientEnv, false, onTerminate);
  }

  private Future<ExitReport> start(RunSpec spec, Map<String, String> base, boolean sandbox, Runnable onTerminate) {
    Context context = vertx.getOrCreateContext();
    Promise<ExitReport> promise = Promise.promise();
    Running entry = new Running(onTerminate, spec.graceOr(grace), spec.checkpoint());
    running.put(spec.taskId(), entry);
    workers.execute(() -> {
      ExitReport report;
      Path work = sandbox ? workDir(spec.taskId()) : null;
      try {
        report = run(spec, entry, base, work).withLastCheckpoint(Checkpoints.writtenAt(entry.checkpointFile));
      } finally {
        if (work != null) {
          TaskDirectories.remove(work);
        }
      }
      running.remove(spec.taskId());
      ExitReport ended = report;
      context.runOnContext(v -> promise.complete(ended));
    });
    return promise.future();
  }

  /**
   * The process's environment starts empty: {@code base} (the host's allow-listed variables), then, with a
   * work directory, {@code HOME} and {@code TMPDIR} in it, then the spec's (HeteroFlow's and the task's).
   */
  private ExitReport run(RunSpec spec, Running entry, Map<String, String> base, Path work) {
    if (spec.command().isEmpty()) {
      return new ExitReport(TaskStatus.FAILED, null, "StartFailed",
          "the process executor needs a command (image " + spec.image() + " needs the docker executor)", "");
    }
    Integer uid;
    TaskLog log;
    try {
      uid = work == null ? null : users.uidFor(spec.tenant());
      log = TaskLog.create(TaskDirectories.owned(logDir, "logs", safe(spec.taskId()), uid), logCapBytes);
    } catch (IOException e) {
      return new ExitReport(TaskStatus.FAILED, null, "StartFailed", "cannot prepare its log: " + e.getMessage(), "");
    }
    writing.put(spec.taskId(), log);
    Future<Void> pumped = null;
    try {
      Map<String, String> env = new LinkedHashMap<>(base);
      if (work != null) {
        TaskDirectories.owned(logDir, "work", safe(spec.taskId()), uid);
        env.put(TaskEnvironment.HOME, TaskDirectories.owned(work.resolve("home"), uid).toString());
        env.put(TaskEnvironment.TMPDIR, TaskDirectories.owned(work.resolve("tmp"), uid).toString());
        if (spec.checkpoint() != null) {
          entry.checkpointFile = work.resolve("checkpoint");
          env.put(Checkpoints.FILE_VARIABLE, entry.checkpointFile.toString());
        }
      }
      env.putAll(spec.env());
      String program = spec.command().get(0);
      Path executable = ProcessGroup.resolve(program, env.get("PATH"))
          .orElseThrow(() -> new IOException(program + ": no such executable"));
      List<String> line = new java.util.ArrayList<>();
      if (uid != null) {
        line.addAll(List.of(SETPRIV, "--reuid", uid.toString(), "--regid", uid.toString(), "--clear-groups", "--"));
      }
      line.addAll(ProcessGroup.leading(executable, spec.command()));
      ProcessBuilder builder = new ProcessBuilder(line).redirectErrorStream(true);
      if (work != null) {
        builder.directory(work.toFile());
      }
      builder.environment().clear();
      builder.environment().putAll(env);
      if (entry.stopRequested) {
        return new ExitReport(TaskStatus.STOPPED, null, "StoppedByUser", "stopped before it started", "");
      }
      entry.process = builder.start();
      Process started = entry.process;
      pumped = Future.fromCompletionStage(
          java.util.concurrent.CompletableFuture.runAsync(() -> log.pump(started.getInputStream()), control));
      if (entry.stopRequested) {
        // a stop arrived while the process was being started: stop() saw no process to signal
        control.execute(() -> terminate(entry));
      }
      boolean finished = entry.process.waitFor(spec.timeoutSeconds(), TimeUnit.SECONDS);
      if (!finished) {
        terminate(entry);
        return new ExitReport(TaskStatus.FAILED, exitCode(entry.process), "TimedOut",
            "timed out after " + spec.timeoutSeconds() + " s", tail(log, pumped));
      }
      int exit = entry.process.exitValue();
      endRest(entry);
      if (entry.stopRequested) {
        return new ExitReport(TaskStatus.STOPPED, exit, "StoppedByUser", "stopped (exit code " + exit + ")",
            tail(log, pumped));
      }
      return new ExitReport(exit == 0 ? TaskStatus.SUCCEEDED : TaskStatus.FAILED, exit, exit == 0 ? null : "ExitCode",
          "exited with code " + exit, tail(log, pumped));
    } catch (IOException e) {
      return new ExitReport(TaskStatus.FAILED, null, "StartFailed", "cannot start: " + e.getMessage(), tail(log, pumped));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (entry.process != null) {
        ProcessGroup.kill(entry.process);
      }
      return new ExitReport(TaskStatus.FAILED, null, "AgentShutdown", "the agent shut down", tail(log, pumped));
    } finally {
      writing.remove(spec.taskId());
      log.close();
    }
  }

  /**
   * The last {@link #LOG_TAIL_BYTES} of the log, once the output pipe has ended (all of the task's group is gone);
   * a descendant that left the group and holds the pipe gets 5 s, then its output is no longer recorded.
   */
  private static String tail(TaskLog log, Future<Void> pumped) {
    if (pumped != null) {
      try {
        pumped.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        // the tail so far
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return log.read(null, LOG_TAIL_BYTES, (long) LOG_TAIL_BYTES).text();
  }

  @Override
  public boolean stop(String taskId) {
    Running entry = running.get(taskId);
    if (entry == null) {
      return false;
    }
    entry.stopRequested = true;
    if (entry.process != null) {
      control.execute(() -> terminate(entry));
    }
    return true;
  }

  /**
   * SIGTERM to the task's whole process group (like {@code docker stop} to PID 1), up to the grace period
   * for the group to exit, then SIGKILL to the group, so nothing the task started outlives it. A client's
   * {@code onTerminate} (e.g. {@code docker stop}) runs first, once.
   */
  private void terminate(Running entry) {
    synchronized (entry) {
      if (entry.ended) {
        return;
      }
      entry.ended = true;
      if (entry.onTerminate != null) {
        entry.onTerminate.run();
      }
      try {
        Checkpoints.handshake(entry.process, entry.checkpoint, entry.checkpointFile);
        ProcessGroup.terminate(entry.process, entry.grace);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ProcessGroup.kill(entry.process);
      }
    }
  }

  /**
   * The main process has exited: whatever it left running in its group is stopped the same way (SIGTERM,
   * grace, SIGKILL) before the task ends, unless a stop is already doing so (this then waits for it).
   */
  private void endRest(Running entry) throws InterruptedException {
    synchronized (entry) {
      if (entry.ended) {
        return;
      }
      entry.ended = true;
      ProcessGroup.endRest(entry.process, entry.grace);
    }
  }

  private static Integer exitCode(Process process) {
    return process.isAlive() ? null : process.exitValue();
  }

  /**
   * Starts a helper command (e.g. {@code docker stop}) with the given environment and does not wait for it:
   * it outlives even an agent that is shutting down (the JVM reaps it).
   */
  static void launch(List<String> command, Map<String, String> env) {
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD);
      builder.environment().clear();
      builder.environment().putAll(env);
      builder.start();
    } catch (IOException e) {
      // the CLI is missing: the signals sent to the task's process group are all we can do
    }
  }

  @Override
  public TaskLog.Chunk logs(String taskId, Long offset, int maxBytes, Long tailBytes) {
    TaskLog log = writing.get(taskId);
    return log != null ? log.read(offset, maxBytes, tailBytes)
        : TaskLog.read(logDir.resolve("logs").resolve(safe(taskId)), logCapBytes, offset, maxBytes, tailBytes);
  }

  /** The uid a container of {@code tenant} runs as ({@code docker run --user}); null without a uid range. */
  Integer containerUid(String tenant) {
    try {
      return users.mappedUid(tenant);
    } catch (IOException e) {
      LOG.warning("no task uid for tenant " + tenant + ": " + e.getMessage());
      return null;
    }
  }

  private static String safe(String taskId) {
    return taskId.replaceAll("[^A-Za-z0-9-]", "_");
  }

  /** Where a task's HOME and TMPDIR live while it runs: {@code <log dir>/work/<task>/{home,tmp}}. */
  Path workDir(String taskId) {
    return logDir.resolve("work").resolve(safe(taskId));
  }

  @Override
  public void close() {
    running.values().forEach(entry -> entry.stopRequested = true);
    running.values().stream().filter(entry -> entry.process != null).forEach(this::terminate);
    workers.shutdownNow();
    control.shutdownNow();
  }
}
