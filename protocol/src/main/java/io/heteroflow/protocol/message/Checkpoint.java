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

  /** A signal as given (with or without {@code SIG}) in its full name, or null when it is not one of {@link #SIGNALS}. */
  public static String signalNamed(String given) {
    String named = given.startsWith("SIG") ? given : "SIG" + given;
    return SIGNALS.contains(named) ? named : null;
  }

  /** Why a signal cannot be used (for a refusal naming its field). */
  public static String allowedSignals() {
    return "one of " + String.join(", ", new java.util.TreeSet<>(SIGNALS));
  }

  /** Whether {@code seconds} is a timeout a task may declare. */
  public static boolean timeoutAllowed(long seconds) {
    return seconds >= 1 && seconds <= MAX_TIMEOUT_SECONDS;
  }

  /** The checkpoint of a message or a stored spec, or null. */
  public static Checkpoint read(BusPayload checkpoint) {
    if (checkpoint == null) {
      return null;
    }
    String signal = signalNamed(checkpoint.requiredString("signal"));
    if (signal == null) {
      throw checkpoint.bad("signal", allowedSignals());
    }
    Integer timeout = checkpoint.optionalInteger("timeout_seconds");
    if (timeout != null && !timeoutAllowed(timeout)) {
      throw checkpoint.bad("timeout_seconds", "between 1 and " + MAX_TIMEOUT_SECONDS);
    }
    return new Checkpoint(signal, timeout == null ? DEFAULT_TIMEOUT_SECONDS : timeout);
  }

  public static Checkpoint fromJson(JsonObject json) {
    return json == null ? null : read(BusPayload.of(json));
  }
}
