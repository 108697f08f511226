package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;

/**
 * A task's checkpoint handshake: before its graceful stop (a user stop, a drain, its timeout or a preemption)
 * the agent sends {@code signal} to the task's process group and waits up to {@code timeoutSeconds} for the task
 * to write the file named by {@code HETEROFLOW_CHECKPOINT_FILE}; only then SIGTERM. {@code signal} is a name
 * such as {@code SIGUSR1}.
 */
public record Checkpoint(String signal, int timeoutSeconds) {
  /** The signals a task may ask for: none of them stops a process that handles it. */
  public static final java.util.Set<String> SIGNALS = java.util.Set.of("SIGUSR1", "SIGUSR2", "SIGINT", "SIGHUP",
      "SIGQUIT");
  public static final int DEFAULT_TIMEOUT_SECONDS = 120;
  public static final int MAX_TIMEOUT_SECONDS = 3600;

  public JsonObject toJson() {
    return new JsonObject().put("signal", signal).put("timeout_seconds", timeoutSeconds);
  }

  public static JsonObject toJson(Checkpoint checkpoint) {
    return checkpoint == null ? null : checkpoint.toJson();
  }

  /** The checkpoint of a message or a stored spec, or null. */
  public static Checkpoint read(BusPayload checkpoint) {
    if (checkpoint == null) {
      return null;
    }
    String signal = checkpoint.requiredString("signal");
    if (!SIGNALS.contains(signal)) {
      throw checkpoint.bad("signal", "one of " + String.join(", ", new java.util.TreeSet<>(SIGNALS)));
    }
    Integer timeout = checkpoint.optionalInteger("timeout_seconds");
    if (timeout != null && (timeout < 1 || timeout > MAX_TIMEOUT_SECONDS)) {
      throw checkpoint.bad("timeout_seconds", "between 1 and " + MAX_TIMEOUT_SECONDS);
    }
    return new Checkpoint(signal, timeout == null ? DEFAULT_TIMEOUT_SECONDS : timeout);
  }

  public static Checkpoint fromJson(JsonObject json) {
    return json == null ? null : read(BusPayload.of(json));
  }
}
