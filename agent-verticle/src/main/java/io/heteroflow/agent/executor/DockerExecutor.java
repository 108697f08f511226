package io.heteroflow.agent.executor;

import io.heteroflow.protocol.TaskEnvironment;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs each task as a container through the docker CLI in the foreground ({@code docker run --rm}), so the
 * process executor underneath captures its logs, enforces the timeout and reports the container's exit code.
 * Stop and timeout: {@code docker stop --time 10} (SIGTERM to the container, 10 s, SIGKILL; the container's
 * other processes end with its PID 1), and SIGTERM through the CLI's signal proxy, then SIGKILL to the CLI.
 * The container's environment is exactly the {@code --env NAME=VALUE} pairs (never {@code --env NAME}, which
 * would copy a host variable); the CLI itself gets only {@link #clientEnvironment}. With a task uid range the
 * container runs as its tenant's uid and gid ({@code --user U:U}, {@link TaskUsers}), never as root.
 */
public final class DockerExecutor implements TaskExecutor {
  private final ProcessExecutor processes;
  private final String docker;
  private final int graceSeconds;

  public DockerExecutor(ProcessExecutor processes, String dockerBinary, int graceSeconds) {
    this.processes = processes;
    this.docker = dockerBinary;
    this.graceSeconds = graceSeconds;
  }

  public static String containerName(String taskId) {
    return "heteroflow-" + taskId.replaceAll("[^A-Za-z0-9_.-]", "_");
  }

  /** The task's own termination grace in whole seconds, else this executor's. */
  private long graceSecondsOf(RunSpec spec) {
    return spec.grace() == null ? graceSeconds : spec.grace().toSeconds();
  }

  /** The full {@code docker run} command line for a task (tested; docker itself need not run in tests). */
  public List<String> runCommand(RunSpec spec) {
    if (spec.image() == null || spec.image().isBlank()) {
      throw new IllegalArgumentException("the docker executor needs an image");
    }
    List<String> command = new ArrayList<>(List.of(docker, "run", "--rm", "--name", containerName(spec.taskId()),
        "--stop-timeout", String.valueOf(graceSecondsOf(spec)), "--network", "host"));
    Integer uid = processes.containerUid(spec.tenant());
    if (uid != null) {
      command.add("--user");
      command.add(uid + ":" + uid);
    }
    command.addAll(DockerDevices.flags(spec.vendor(), spec.cards()));
    Map<String, String> env = new TreeMap<>(spec.env());
    if (spec.vendor() != null && env.containsKey(spec.vendor().visibilityVariable()) && !spec.cards().isEmpty()) {
      env.put(spec.vendor().visibilityVariable(), DockerDevices.visibleInside(spec.vendor(), spec.cards()));
    }
    env.forEach((key, value) -> {
      command.add("--env");
      command.add(key + "=" + value);
    });
    command.add(spec.image());
    command.addAll(spec.command());
    return command;
  }

  @Override
  public Future<ExitReport> start(RunSpec spec) {
    List<String> command;
    try {
      command = runCommand(spec);
    } catch (IllegalArgumentException e) {
      return Future.succeededFuture(new ExitReport(io.heteroflow.protocol.TaskStatus.FAILED, null, "StartFailed",
          e.getMessage(), ""));
    }
    Map<String, String> client = clientEnvironment(System.getenv());
    List<String> stop = List.of(docker, "stop", "--time", String.valueOf(graceSecondsOf(spec)),
        containerName(spec.taskId()));
    return processes.startClient(spec.withCommand(command, Map.of()), client,
        () -> ProcessExecutor.launch(stop, client));
  }

  /**
   * The docker CLI's own environment: the host's allow-listed variables, {@code HOME} (for
   * {@code ~/.docker/config.json}, registry credentials) and the CLI's {@code DOCKER_*} settings; nothing
   * of it reaches the container.
   */
  static Map<String, String> clientEnvironment(Map<String, String> host) {
    Map<String, String> env = new TreeMap<>(TaskEnvironment.fromHost(host));
    host.forEach((name, value) -> {
      if (name.equals("HOME") || name.startsWith("DOCKER_")) {
        env.put(name, value);
      }
    });
    return env;
  }

  /** Stops the container: {@code docker stop} and the signals to the CLI (see the class comment). */
  @Override
  public boolean stop(String taskId) {
    return processes.stop(taskId);
  }

  @Override
  public TaskLog.Chunk logs(String taskId, Long offset, int maxBytes, Long tailBytes) {
    return processes.logs(taskId, offset, maxBytes, tailBytes);
  }

  @Override
  public void close() {
    processes.close();
  }
}
