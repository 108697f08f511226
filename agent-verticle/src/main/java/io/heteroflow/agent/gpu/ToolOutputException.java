package io.heteroflow.agent.gpu;

/** A vendor tool answered, but with output the detector cannot read: a clear error, and no cards. */
public final class ToolOutputException extends Exception {
  public ToolOutputException(String message) {
    super(message);
  }
}
