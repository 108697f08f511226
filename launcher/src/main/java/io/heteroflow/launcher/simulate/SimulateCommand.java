package io.heteroflow.launcher.simulate;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.LongStream;

/**
 * {@code heteroflow simulate}: replays Alibaba's openb trace through the scheduler's plugins under the FGD
 * paper's protocol and prints the GPU allocation ratio at 100 % and 130 % arrived demand per policy (mean and
 * standard deviation over the seeds) beside the published figures; {@code --json} and {@code --svg} write the
 * results and a plot of allocation ratio against arrived demand.
 */
public final class SimulateCommand {
  static final String TRACES = "../shared/traces/alibaba-gpu-v2023/";

  private SimulateCommand() {}

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

  public static void run(List<String> argv) throws Exception {
    Map<String, String> flags = flags(argv);
    Path nodes = Path.of(flags.getOrDefault("--nodes", TRACES + "openb_node_list_gpu_node.csv"));
    List<Path> pods = Arrays.stream(flags.getOrDefault("--pods", TRACES + "openb_pod_list_default.csv").split(","))
        .map(Path::of).toList();
    List<String> policies = List.of(flags.getOrDefault("--policy", String.join(",", TraceSimulation.POLICIES)).split(","));
    policies.forEach(TraceSimulation::policyConfig);
    long[] seeds = seeds(flags.getOrDefault("--seeds", "42-51"));
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

  private static Map<String, String> flags(List<String> argv) {
    List<String> known = List.of("--nodes", "--pods", "--policy", "--seeds", "--json", "--svg");
    Map<String, String> flags = new LinkedHashMap<>();
    for (int i = 0; i < argv.size(); i += 2) {
      if (!known.contains(argv.get(i))) {
        throw new IllegalArgumentException("unknown option " + argv.get(i) + " (known: " + known + ")");
      }
      if (i + 1 >= argv.size()) {
        throw new IllegalArgumentException(argv.get(i) + " needs a value");
      }
      flags.put(argv.get(i), argv.get(i + 1));
    }
    return flags;
  }
}
