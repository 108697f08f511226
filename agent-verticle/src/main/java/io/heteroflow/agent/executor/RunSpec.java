package io.heteroflow.agent.executor;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Checkpoint;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What an executor needs to start one task: the command (and image), the full environment to inject, the
 * time limit, the node's vendor with the host card indices (for container device flags), and the task's own
 * termination grace (SIGTERM, then this long, then SIGKILL; null: the executor's default) and checkpoint handshake
 * (null: none), and its tenant (whose user runs it; null: {@link TaskUsers#DEFAULT_TENANT}).
 */
public record RunSpec(String taskId, String image, List<String> command, Map<String, String> env, int timeoutSeconds,
                      GpuVendor vendor, List<Integer> cards, Duration grace, Checkpoint checkpoint, String tenant) {
  public RunSpec {
    command = List.copyOf(command);
    env = Map.copyOf(env);
    cards = List.copyOf(cards);
  }

  /** A task of no named tenant. */
  public RunSpec(String taskId, String image, List<String> command, Map<String, String> env, int timeoutSeconds,
                 GpuVendor vendor, List<Integer> cards, Duration grace, Checkpoint checkpoint) {
    this(taskId, image, command, env, timeoutSeconds, vendor, cards, grace, checkpoint, null);
  }

  /** A task with the executor's default termination grace. */
  public RunSpec(String taskId, String image, List<String> command, Map<String, String> env, int timeoutSeconds,
                 GpuVendor vendor, List<Integer> cards) {
    this(taskId, image, command, env, timeoutSeconds, vendor, cards, null, null, null);
  }

  public RunSpec withCommand(List<String> newCommand, Map<String, String> newEnv) {
    return new RunSpec(taskId, image, newCommand, newEnv, timeoutSeconds, vendor, cards, grace, checkpoint, tenant);
  }

  /** The grace to stop this task with: its own, else {@code otherwise}. */
  public Duration graceOr(Duration otherwise) {
    return grace == null ? otherwise : grace;
  }
}
