package io.heteroflow.controlplane.scheduler.framework;

/** A plugin setting refused by its schema: names the setting, says what it must be (the API's 400 says both). */
public final class InvalidSettingException extends IllegalArgumentException {
  private final String setting;
  private final boolean unknown;

  public InvalidSettingException(String setting, String problem) {
    this(setting, problem, false);
  }

  private InvalidSettingException(String setting, String problem, boolean unknown) {
    super(problem);
    this.setting = setting;
    this.unknown = unknown;
  }

  /** The plugin declares no setting of this name. */
  static InvalidSettingException unknown(String setting, String problem) {
    return new InvalidSettingException(setting, problem, true);
  }

  public boolean unknown() {
    return unknown;
  }

  public String setting() {
    return setting;
  }

  /** "preempt_stage: must be one of disabled, scheduled, running" */
  public String describe() {
    return setting + ": " + getMessage();
  }
}
