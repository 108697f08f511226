package io.heteroflow.controlplane.scheduler.framework;

import java.util.Locale;

public enum PluginKind {
  FILTER, SCORE;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }
}
