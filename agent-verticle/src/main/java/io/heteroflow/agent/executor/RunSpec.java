package io.heteroflow.agent.executor;

import java.util.List;
import java.util.Map;

/** What an executor needs to start one task: the command, the full environment to inject, the time limit. */
public record RunSpec(String taskId, String image, List<String> command, Map<String, String> env, int timeoutSeconds) {
  public RunSpec {
    command = List.copyOf(command);
    env = Map.copyOf(env);
  }
}
