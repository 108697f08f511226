package io.heteroflow.launcher.simulate;

import io.heteroflow.launcher.Cli;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.LongStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code heteroflow simulate}: replays Alibaba's openb trace through the scheduler's plugins under the FGD
 * paper's protocol and prints the GPU allocation ratio at 100 % and 130 % arrived demand per policy (mean and
 * standard deviation over the seeds) beside the published figures; {@code --json} and {@code --svg} write the
 * results and a plot of allocation ratio against arrived demand.
 */
@Command(name = "simulate", sortOptions = false,
    description = {"Replays Alibaba's openb GPU trace through the scheduler's placement plugins.",
        "Follows the FGD paper's protocol (ATC'23) and prints the GPU allocation ratio per policy beside the",
        "published figures."},
    footer = {"", "The trace: https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv "
        + "(openb_node_list_gpu_node.csv and an openb_pod_list_*.csv).",
        "", "Examples:",
        "  java -jar heteroflow.jar simulate --nodes trace/openb_node_list_gpu_node.csv \\",
        "      --pods trace/openb_pod_list_default.csv",
        "  java -jar heteroflow.jar simulate --nodes trace/openb_node_list_gpu_node.csv \\",
        "      --pods trace/openb_pod_list_gpushare40.csv,trace/openb_pod_list_gpuspec25.csv --policy frag,binpack \\",
        "      --seeds 42-44 --json out.json --svg out.svg",
        "  java -jar heteroflow.jar simulate --replay --compress 1000 --load 3 --policies fifo,fair,backfill \\",
        "      --json replay.json --svg replay.svg"})
public final class SimulateCommand implements Callable<Integer> {
  /** Where the trace lies by default (relative to the working directory): a sibling checkout of the data. */
  static final String TRACES = "../shared/traces/alibaba-gpu-v2023/";

  @Option(names = "--nodes", paramLabel = "CSV",
      description = "The node list (default: openb_node_list_gpu_node.csv in " + TRACES + ").")
  String nodes;
  @Option(names = "--pods", paramLabel = "CSV[,CSV...]",
      description = "The pod list(s), one table row each (default: openb_pod_list_default.csv in " + TRACES + ").")
  String pods;
  @Option(names = "--policy", paramLabel = "P[,P...]",
      description = "spread, binpack, bestfit, frag (default: all four; --replay: one, default binpack).")
  String policy;
  @Option(names = "--seeds", paramLabel = "FROM-TO|N,N",
      description = "The random orders to average over (default 42-51).")
  String seeds;
  @Option(names = "--replay", description = {"Replay mode with departures: arrivals in trace time (compressed),",
      "runtimes from the trace, queues and gangs by a seeded rule; compares queueing policies (README)."})
  boolean replay;
  @Option(names = "--compress", paramLabel = "FACTOR",
      description = "Replay: arrival times divided by FACTOR, runtimes kept (default " + ReplayCommand.COMPRESS + ").")
  String compress;
  @Option(names = "--load", paramLabel = "COPIES", description = "Replay: copies of the pod list laid over each other"
      + " (the arrival rate x COPIES; default " + ReplayCommand.LOAD + ").")
  String load;
  @Option(names = "--seed", paramLabel = "N", description = "Replay: the seed of queues, gangs and node order (default 42).")
  String seed;
  @Option(names = "--policies", paramLabel = "P[,P...]",
      description = "Replay: fifo, greedy, fair, backfill (default fifo,fair,backfill).")
  String policies;
  @Option(names = "--json", paramLabel = "FILE", description = "Also write the results as JSON.")
  String json;
  @Option(names = "--svg", paramLabel = "FILE", description = "Also plot allocation ratio against arrived demand (--replay: allocation over time).")
  String svg;
  @Mixin
  Cli.Help help;
  @Spec
  CommandSpec spec;

  public SimulateCommand() {}

  @Override
  public Integer call() throws Exception {
    run(Cli.given(spec.commandLine().getParseResult()));
    return 0;
  }

  /** One policy on one trace over all seeds. */
  record Result(String trace, String policy, long[] seeds, List<TraceSimulation.Curve> curves) {
    double mean(int percent) {
      return curves.stream().mapToDouble(curve -> curve.at(percent)).average().orElse(Double.NaN);
    }

    double deviation(int percent) {
      double mean = mean(percent);
      return Math.sqrt(curves.stream().mapToDouble(curve -> Math.pow(curve.at(percent) - mean, 2)).average().orElse(0));
    }
  }

  /** The command on a list of arguments (tests): a usage error is an IllegalArgumentException naming the option. */
  public static void run(List<String> argv) throws Exception {
    run(Cli.given(Cli.parse(new SimulateCommand(), argv)));
  }

  private static void run(Map<String, String> flags) throws Exception {
    if (flags.containsKey("--replay")) {
      ReplayCommand.run(flags);
      return;
    }
    List<String> policies = List.of(flags.getOrDefault("--policy", String.join(",", TraceSimulation.POLICIES)).split(","));
    policies.forEach(TraceSimulation::policyConfig);
    long[] seeds = seeds(flags.getOrDefault("--seeds", "42-51"));
    Path nodes = existing("--nodes", flags.getOrDefault("--nodes", TRACES + "openb_node_list_gpu_node.csv"));
    List<Path> pods = Arrays.stream(flags.getOrDefault("--pods", TRACES + "openb_pod_list_default.csv").split(","))
        .map(file -> existing("--pods", file.trim())).toList();
    List<Result> results = new ArrayList<>();
    for (Path podFile : pods) {
      Trace trace = Trace.read(nodes, podFile);
      for (String policy : policies) {
        List<TraceSimulation.Curve> curves = LongStream.of(seeds).parallel().boxed()
            .map(seed -> TraceSimulation.run(trace, policy, seed)).toList();
        results.add(new Result(trace.name(), policy, seeds, curves));
        System.err.printf(Locale.ROOT, "%s %s: %.2f %% at 100 %% demand%n", trace.name(), policy,
            results.get(results.size() - 1).mean(100));
      }
    }
    System.out.println(table(results));
    if (flags.containsKey("--json")) {
      Files.writeString(Path.of(flags.get("--json")), json(results).encodePrettily());
    }
    if (flags.containsKey("--svg")) {
      Files.writeString(Path.of(flags.get("--svg")), AllocationPlot.svg(results));
    }
  }

  static String table(List<Result> results) {
    StringBuilder out = new StringBuilder("| trace | policy | alloc @100 % demand | alloc @130 % | published (same family) |"
        + " published FGD |\n|---|---|---|---|---|---|\n");
    for (Result result : results) {
      String family = Published.counterpart(result.policy());
      Double published = Published.value(result.trace(), family);
      Double fgd = Published.value(result.trace(), "FGD");
      out.append(String.format(Locale.ROOT, "| %s | %s | %.2f ± %.2f | %.2f ± %.2f | %s | %s |%n", result.trace(),
          result.policy(), result.mean(100), result.deviation(100), result.mean(130), result.deviation(130),
          published == null ? "—" : family + " " + published, fgd == null ? "—" : String.valueOf(fgd)));
    }
    return out.toString();
  }

  static JsonArray json(List<Result> results) {
    JsonArray array = new JsonArray();
    for (Result result : results) {
      array.add(new JsonObject().put("policy", result.policy()).put("trace", result.trace())
          .put("seeds", new JsonArray(LongStream.of(result.seeds()).boxed().toList()))
          .put("alloc_at_100", round(result.mean(100))).put("alloc_at_130", round(result.mean(130)))
          .put("stddev_at_100", round(result.deviation(100))).put("stddev_at_130", round(result.deviation(130))));
    }
    return array;
  }

  private static double round(double value) {
    return Math.round(value * 100) / 100.0;
  }

  static long[] seeds(String text) {
    try {
      if (text.contains("-")) {
        String[] range = text.split("-", 2);
        long from = Long.parseLong(range[0].trim());
        long to = Long.parseLong(range[1].trim());
        if (to < from || to - from > 1000) {
          throw new NumberFormatException();
        }
        return LongStream.rangeClosed(from, to).toArray();
      }
      return Arrays.stream(text.split(",")).mapToLong(seed -> Long.parseLong(seed.trim())).toArray();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--seeds: expected FROM-TO or a comma-separated list, got '" + text + "'");
    }
  }

  /** The trace file given to {@code flag}; a missing one is refused naming the file, the flag and the source. */
  static Path existing(String flag, String file) {
    Path path = Path.of(file);
    if (!Files.isRegularFile(path)) {
      throw new Cli.Refusal(flag + ": no such file " + path.toAbsolutePath().normalize() + " (the openb trace is public: "
          + "https://github.com/alibaba/clusterdata/tree/master/cluster-trace-gpu-v2023/csv; pass its "
          + "openb_node_list_gpu_node.csv with --nodes and an openb_pod_list_*.csv with --pods)");
    }
    return path;
  }
}
