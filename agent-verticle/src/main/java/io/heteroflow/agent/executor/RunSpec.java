package io.heteroflow.agent.executor;

import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.Map;

/**
 * What an executor needs to start one task: the command (and image), the full environment to inject, the
 * time limit, and the node's vendor with the host card indices (for container device flags).
 */
public record RunSpec(String taskId, String image, List<String> command, Map<String, String> env, int timeoutSeconds,
                      GpuVendor vendor, List<Integer> cards) {
  public RunSpec {
    command = List.copyOf(command);
    env = Map.copyOf(env);
    cards = List.copyOf(cards);
  }

  public RunSpec withCommand(List<String> newCommand, Map<String, String> newEnv) {
    return new RunSpec(taskId, image, newCommand, newEnv, timeoutSeconds, vendor, cards);
  }
}
