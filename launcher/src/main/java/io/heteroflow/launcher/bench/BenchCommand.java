package io.heteroflow.launcher.bench;

import java.util.List;

/** {@code heteroflow bench}: the throughput benchmark (see README). */
public final class BenchCommand {
  private BenchCommand() {}

  public static void run(List<String> args) throws Exception {
    throw new IllegalArgumentException("bench is not built yet");
  }
}
