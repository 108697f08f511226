package io.heteroflow.controlplane.scheduler.framework;

/**
 * The verdict of one filter on one node: success, or a reason code with a short, countable phrase
 * ("offline", "not nvidia", "fewer than 4 free cards") and the plugin that said it.
 */
public record Status(ReasonCode code, String reason, String plugin) {
  private static final Status OK = new Status(null, null, null);

  public static Status ok() {
    return OK;
  }

  public static Status reject(String plugin, ReasonCode code, String reason) {
    return new Status(code, reason, plugin);
  }

  public boolean isOk() {
    return code == null;
  }
}
