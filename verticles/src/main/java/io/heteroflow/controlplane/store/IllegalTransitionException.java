package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.TaskStatus;

/** A transition the state machine does not declare; refused before anything is written. */
public final class IllegalTransitionException extends RuntimeException {
  private final TaskStatus from;
  private final TaskStatus to;

  public IllegalTransitionException(TaskStatus from, TaskStatus to) {
    super("illegal transition " + from.wire() + " → " + to.wire());
    this.from = from;
    this.to = to;
  }

  public TaskStatus from() {
    return from;
  }

  public TaskStatus to() {
    return to;
  }
}
