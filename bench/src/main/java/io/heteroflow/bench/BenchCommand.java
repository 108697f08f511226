package io.heteroflow.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code heteroflow bench}: the scheduling throughput benchmark (see {@link BenchRunner} for what one scenario
 * does). Runs the real control plane on a real PostgreSQL — an embedded one (zonky, fsync and synchronous
 * commit on, like {@code dev}) unless {@code --pg-url} names a server, on which it creates and drops a database
 * per scenario — and prints a markdown table; {@code --json FILE} also writes one object per scenario.
 */
@Command(name = "bench", sortOptions = false,
    description = {"The scheduling throughput benchmark on a real PostgreSQL.",
        "Runs the real control plane on a real PostgreSQL (embedded, fsync and synchronous commit on, unless",
        "--pg-url names a server) and prints a markdown table."},
    footer = {"", "Examples:",
        "  java -jar heteroflow.jar bench --scenario brief",
        "  java -jar heteroflow.jar bench --scenario 5000-nodes --json bench.json",
        "  java -jar heteroflow.jar bench --scenario gangs --json gangs.json",
        "  java -jar heteroflow.jar bench --scenario brief --nodes 100 --tasks 500 --warmup 0 --half-load-s 0"})
public final class BenchCommand implements Callable<Integer> {
  @Option(names = "--scenario", paramLabel = "NAME", description = {"brief (300 nodes, 2,000 tasks) | 10k-cards "
      + "(1,250 nodes, 8,000 tasks) | 5000-nodes (5,000 nodes, 10,000 tasks) | all (default: those three)"
      + " | preempt (5,000 full nodes, 1,000 high-priority arrivals; --nodes, --tasks apply)"
      + " | gangs (5,000 nodes, 300 task groups of 2-16 members x 8 cards and 2,000 single tasks of 1-8 cards;"
      + " --nodes, --groups, --tasks apply)"})
  String scenario;
  @Option(names = "--json", paramLabel = "FILE", description = "Also write the results, one object per scenario.")
  String json;
  @Option(names = "--pg-url", paramLabel = "URL", description = {"An external PostgreSQL "
      + "(postgresql://user:pass@host:port/db, or HETEROFLOW_PG_URL; needs CREATEDB): a database is created and "
      + "dropped per scenario; default: embedded PostgreSQL."})
  String pgUrl;
  @Option(names = "--nodes", paramLabel = "N", description = "Override the scenario's node count (8 cards each).")
  String nodes;
  @Option(names = "--tasks", paramLabel = "M", description = "Override the scenario's burst size.")
  String tasks;
  @Option(names = "--groups", paramLabel = "G", description = "The gangs scenario's task groups (default 300).")
  String groups;
  @Option(names = "--pg-seconds", paramLabel = "S",
      description = "Length of each raw PostgreSQL bind-transaction run (default 3).")
  String pgSeconds;
  @Option(names = "--timeout", paramLabel = "S", description = "Give up on a drain after S seconds (default 900).")
  String timeout;
  @Option(names = "--stall", paramLabel = "S",
      description = "End a drain when no task was bound for S seconds (default 12, > the 5 s tick).")
  String stall;
  @Option(names = "--heartbeat-s", paramLabel = "S", description = {"Every node heartbeats once per S seconds "
      + "during the run (default 10, within the 15 s offline grace; 2 is what real agents do; 0: only at "
      + "registration, and the control plane's offline grace is raised to 1 h so no node drops out)."})
  String heartbeat;
  @Option(names = "--seed", paramLabel = "N", description = "The task mix's random seed (default 42).")
  String seed;
  @Option(names = "--probes", paramLabel = "on|off",
      description = "The per-phase probes (snapshot read, decide, bind round trips; default on).")
  String probes;
  @Option(names = "--warmup", paramLabel = "N", description = {"Tasks drained and released (in waves of <= "
      + "1,000) before the measured burst, so the JIT has compiled the hot paths (default 3000; 0: measure a "
      + "cold control plane)."})
  String warmup;
  @Option(names = "--half-load-s", paramLabel = "S", description = {"After the warm-up, S seconds of tasks "
      + "arriving one by one (TaskStore.create and a kick each, as the API does) at half the warm-up's rate, "
      + "after a 1 s lead-in that is not measured; reports their submit-to-scheduled p50/p99 and the create's "
      + "answer time (default 5; 0: off; needs --warmup > 0)."})
  String halfLoad;
  @Option(names = "--half-load-rate", paramLabel = "R",
      description = "The half-load phase's arrivals per second instead of half the warm rate.")
  String halfLoadRate;
  @Option(names = "--pg-setting", paramLabel = "N=V", description = {"Extra settings of the embedded "
      + "PostgreSQL, comma-separated (e.g. autovacuum_naptime=1s); not with --pg-url."})
  String pgSetting;
  @Option(names = "--jfr", paramLabel = "DIR",
      description = "Record each drain with Flight Recorder (DIR/SCENARIO.jfr) and summarise it.")
  String jfr;
  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help (with examples) and exit.")
  boolean help;
  @Spec
  CommandSpec spec;

  public BenchCommand() {}

  /** {@code heteroflow bench} from picocli: the options given, validated and run. */
  @Override
  public Integer call() throws Exception {
    run(given(spec.commandLine().getParseResult()));
    return 0;
  }

  /** The command on a list of arguments (tests): a usage error is an IllegalArgumentException naming the option. */
  public static void run(List<String> args) throws Exception {
    BenchCommand command = new BenchCommand();
    CommandLine.ParseResult parsed;
    try {
      parsed = new CommandLine(command).parseArgs(args.toArray(String[]::new));
    } catch (ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    if (parsed.isUsageHelpRequested()) {
      System.out.println(usage());
      return;
    }
    run(given(parsed));
  }

  /**
   * The options given, by long name, as typed (the launcher's {@code Cli.given}, which this module cannot see:
   * the launcher depends on it, not the other way round).
   */
  private static Map<String, String> given(CommandLine.ParseResult parsed) {
    Map<String, String> flags = new LinkedHashMap<>();
    for (OptionSpec option : parsed.matchedOptions()) {
      if (!option.usageHelp()) {
        List<String> values = option.originalStringValues();
        flags.put(option.longestName(), values.isEmpty() ? "" : values.get(values.size() - 1));
      }
    }
    return flags;
  }

  private static void run(Map<String, String> flags) throws Exception {
    boolean preempt = PreemptionBench.NAME.equals(flags.get("--scenario"));
    boolean gangs = GangBench.NAME.equals(flags.get("--scenario"));
    if (flags.containsKey("--groups") && !gangs) {
      throw new IllegalArgumentException("--groups applies to --scenario " + GangBench.NAME + " only");
    }
    List<BenchScenario> scenarios = preempt || gangs ? List.of() : scenarios(flags);
    BenchRunner.Options options = options(flags);
    Path json = flags.containsKey("--json") ? Path.of(flags.get("--json")) : null;
    if (json != null && json.toAbsolutePath().getParent() != null && !Files.isDirectory(json.toAbsolutePath().getParent())) {
      throw new IllegalArgumentException("--json: no such directory " + json.toAbsolutePath().getParent());
    }
    String url = flags.getOrDefault("--pg-url", System.getenv("HETEROFLOW_PG_URL"));
    PrintStream log = System.err;
    List<JsonObject> results = new ArrayList<>();
    Map<String, String> settings = pgSettings(flags);
    if (!settings.isEmpty() && url != null && !url.isBlank()) {
      throw new IllegalArgumentException("--pg-setting configures the embedded PostgreSQL; it cannot be used with --pg-url");
    }
    try (BenchDatabases databases = url == null || url.isBlank() ? BenchDatabases.embedded(settings)
        : BenchDatabases.external(url)) {
      log.println("heteroflow bench: PostgreSQL " + databases.describe() + "; " + String.join(", ",
          ProcessStats.describeMachine()));
      if (preempt) {
        add(results, json, databases, new PreemptionBench(flags.containsKey("--nodes")
            ? positiveInt(flags, "--nodes", 100_000) : 5000, flags.containsKey("--tasks")
            ? positiveInt(flags, "--tasks", 100_000) : 1000, options, log).run(databases.fresh()));
      }
      if (gangs) {
        add(results, json, databases, new GangBench(
            flags.containsKey("--nodes") ? positiveInt(flags, "--nodes", 100_000) : GangBench.DEFAULT_NODES,
            flags.containsKey("--groups") ? nonNegativeInt(flags, "--groups", 100_000) : GangBench.DEFAULT_GROUPS,
            flags.containsKey("--tasks") ? nonNegativeInt(flags, "--tasks", 1_000_000) : GangBench.DEFAULT_TASKS,
            GangBench.MAX_MEMBERS, options, log).run(databases.fresh()));
      }
      for (BenchScenario scenario : scenarios) {
        add(results, json, databases, new BenchRunner(scenario, options, log).run(databases.fresh(), databases::fresh));
      }
    }
    System.out.println(preempt ? BenchReport.preemption(results.get(0))
        : gangs ? BenchReport.gangs(results.get(0)) : BenchReport.markdown(results));
    for (JsonObject result : results) {
      if (!result.getJsonArray("violations").isEmpty()) {
        throw new IllegalStateException("scenario " + result.getString("scenario") + " broke invariants: "
            + result.getJsonArray("violations").encode());
      }
    }
  }

  /**
   * One scenario's result, with the server it ran on; the JSON file is written again after every scenario, so a
   * later failure keeps the earlier results.
   */
  private static void add(List<JsonObject> results, Path json, BenchDatabases databases, JsonObject result)
      throws Exception {
    result.put("postgres", databases.describe());
    results.add(result);
    if (json != null) {
      Files.writeString(json, new JsonArray(new ArrayList<>(results)).encodePrettily() + "\n");
    }
  }

  /** The help text (picocli's, from the options above). */
  static String usage() {
    return new CommandLine(new BenchCommand()).getUsageMessage();
  }

  /** {@code --pg-setting name=value[,name=value…]}: extra server settings of the embedded PostgreSQL. */
  static Map<String, String> pgSettings(Map<String, String> flags) {
    Map<String, String> settings = new LinkedHashMap<>();
    String value = flags.get("--pg-setting");
    if (value == null) {
      return settings;
    }
    for (String pair : value.split(",")) {
      int equals = pair.indexOf('=');
      if (equals <= 0 || equals == pair.length() - 1 || !pair.substring(0, equals).trim().matches("[a-z_.]+")) {
        throw new IllegalArgumentException("--pg-setting must be name=value[,name=value...], was '" + value + "'");
      }
      settings.put(pair.substring(0, equals).trim(), pair.substring(equals + 1).trim());
    }
    return settings;
  }

  static List<BenchScenario> scenarios(Map<String, String> flags) {
    String name = flags.getOrDefault("--scenario", "all");
    List<BenchScenario> chosen;
    if (name.equals("all")) {
      chosen = BenchScenario.ALL;
    } else {
      chosen = List.of(BenchScenario.named(name).orElseThrow(() -> new IllegalArgumentException(
          "--scenario must be one of " + String.join(", ", BenchScenario.names()) + ", all; was '" + name + "'")));
    }
    List<BenchScenario> adjusted = new ArrayList<>();
    for (BenchScenario scenario : chosen) {
      if (flags.containsKey("--nodes")) {
        scenario = scenario.withNodes(positiveInt(flags, "--nodes", 100_000));
      }
      if (flags.containsKey("--tasks")) {
        scenario = scenario.withTasks(positiveInt(flags, "--tasks", 1_000_000));
      }
      adjusted.add(scenario);
    }
    return adjusted;
  }

  static BenchRunner.Options options(Map<String, String> flags) {
    BenchRunner.Options defaults = BenchRunner.Options.defaults();
    String probes = flags.getOrDefault("--probes", "on");
    if (!probes.equals("on") && !probes.equals("off")) {
      throw new IllegalArgumentException("--probes must be on or off, was '" + probes + "'");
    }
    return new BenchRunner.Options(
        seconds(flags, "--pg-seconds", defaults.pgSeconds(), 0.1, 600),
        seconds(flags, "--timeout", defaults.timeoutSeconds(), 1, 86_400),
        seconds(flags, "--stall", defaults.stallSeconds(), 1, 3600),
        seconds(flags, "--heartbeat-s", defaults.heartbeatSeconds(), 0, 3600),
        flags.containsKey("--seed") ? longValue(flags, "--seed") : defaults.seed(),
        probes.equals("on"),
        flags.containsKey("--jfr") ? Path.of(flags.get("--jfr")) : null,
        flags.containsKey("--warmup") ? nonNegativeInt(flags, "--warmup", 100_000) : defaults.warmupTasks(),
        seconds(flags, "--half-load-s", defaults.halfLoadSeconds(), 0, 600),
        number(flags, "--half-load-rate", defaults.halfLoadRate(), 0, 100_000, "arrivals per second"));
  }

  private static int positiveInt(Map<String, String> flags, String flag, int max) {
    return wholeNumber(flags, flag, 1, max);
  }

  private static int nonNegativeInt(Map<String, String> flags, String flag, int max) {
    return wholeNumber(flags, flag, 0, max);
  }

  private static int wholeNumber(Map<String, String> flags, String flag, int min, int max) {
    String value = flags.get(flag);
    try {
      int parsed = Integer.parseInt(value);
      if (parsed < min || parsed > max) {
        throw new NumberFormatException();
      }
      return parsed;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be a whole number from " + min + " to " + max + ", was '"
          + value + "'");
    }
  }

  private static long longValue(Map<String, String> flags, String flag) {
    try {
      return Long.parseLong(flags.get(flag));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be a whole number, was '" + flags.get(flag) + "'");
    }
  }

  private static double seconds(Map<String, String> flags, String flag, double fallback, double min, double max) {
    return number(flags, flag, fallback, min, max, "seconds");
  }

  private static double number(Map<String, String> flags, String flag, double fallback, double min, double max,
                               String unit) {
    if (!flags.containsKey(flag)) {
      return fallback;
    }
    String value = flags.get(flag);
    try {
      double parsed = Double.parseDouble(value);
      if (!(parsed >= min && parsed <= max) || (parsed > 0 && parsed < min)) {
        throw new NumberFormatException();
      }
      return parsed;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be a number of " + unit + " from " + min + " to " + max
          + ", was '" + value + "'");
    }
  }
}
