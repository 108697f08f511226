package io.heteroflow.launcher.simulate;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code heteroflow simulate --replay}: builds the workload once ({@link ReplayWorkload}), runs each queueing policy
 * on it ({@link ReplaySimulation}, in parallel), prints the side-by-side table and writes the JSON and the plot.
 */
final class ReplayCommand {
  static final double COMPRESS = 1000;
  static final String PLACEMENT = "binpack";
  static final int LOAD = 3;

  private ReplayCommand() {}

  static void run(Map<String, String> flags) throws Exception {
    double compress = number("--compress", flags.getOrDefault("--compress", String.valueOf(COMPRESS)));
    long seed = (long) number("--seed", flags.getOrDefault("--seed", "42"));
    int copies = (int) number("--load", flags.getOrDefault("--load", String.valueOf(LOAD)));
    List<String> policies = List.of(flags.getOrDefault("--policies", "fifo,fair,backfill").split(","));
    policies.forEach(policy -> {
      if (!ReplayRound.POLICIES.contains(policy.trim())) {
        throw new IllegalArgumentException("--policies: unknown policy '" + policy + "' (known: "
            + String.join(", ", ReplayRound.POLICIES) + ")");
      }
    });
    String placement = flags.getOrDefault("--policy", PLACEMENT);
    TraceSimulation.policyConfig(placement);
    Path nodes = SimulateCommand.existing("--nodes", flags.getOrDefault("--nodes",
        SimulateCommand.TRACES + "openb_node_list_gpu_node.csv"));
    Path pods = SimulateCommand.existing("--pods", flags.getOrDefault("--pods",
        SimulateCommand.TRACES + "openb_pod_list_default.csv"));
    Trace trace = Trace.read(nodes, pods);
    ReplayWorkload workload = ReplayWorkload.build(trace, pods, compress, copies, seed);
    System.err.printf(Locale.ROOT, "%s: %d jobs (%d gangs), left out %d without scheduled_time and %d with runtime"
            + " <= 0; %d copies, arrivals compressed %sx%n", trace.name(), workload.jobs().size(),
        workload.jobs().stream().filter(ReplayWorkload.Job::gang).count(), workload.withoutScheduledTime(),
        workload.nonPositiveRuntime(), copies, compress);
    List<ReplaySimulation.Run> runs = new ArrayList<>(policies.parallelStream()
        .map(policy -> ReplaySimulation.run(trace, workload, policy.trim(), placement)).toList());
    System.out.println(ReplayReport.table(runs));
    if (flags.containsKey("--json")) {
      Files.writeString(Path.of(flags.get("--json")), ReplayReport.json(runs, trace.name(), placement).encodePrettily());
    }
    if (flags.containsKey("--svg")) {
      Files.writeString(Path.of(flags.get("--svg")), UtilisationPlot.svg(runs, trace.name()));
    }
  }

  private static double number(String flag, String text) {
    try {
      return Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + ": expected a number, got '" + text + "'");
    }
  }
}
