package io.heteroflow.launcher.simulate;

import java.util.List;

/** {@code heteroflow simulate}: the trace simulator (see README). */
public final class SimulateCommand {
  private SimulateCommand() {}

  public static void run(List<String> args) throws Exception {
    throw new IllegalArgumentException("simulate is not built yet");
  }
}
