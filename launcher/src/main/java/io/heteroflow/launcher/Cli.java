package io.heteroflow.launcher;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * What every subcommand shares on the command line (picocli): {@code -h/--help}, the environment-variable
 * fallbacks, and how errors end a run — a usage error exits 2 naming the option, a {@link Refusal} (a busy
 * port, a missing file) exits 1 with its message only, anything else exits 1 with its stack trace.
 */
public final class Cli {
  /** Exit status of a usage error (an unknown option, a missing or bad value). */
  public static final int USAGE = CommandLine.ExitCode.USAGE;
  /** Exit status of a run that could not start or failed. */
  public static final int FAILED = CommandLine.ExitCode.SOFTWARE;

  private Cli() {}

  /** {@code -h / --help} of a subcommand. */
  public static final class Help {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help (with examples) and exit.")
    boolean help;
  }

  /** The run cannot go on for a reason the user can fix (the message says how); no stack trace. */
  public static final class Refusal extends RuntimeException {
    public Refusal(String message) {
      super(message);
    }
  }

  /** The option's value when given, else the environment variable's when set and not blank, else the fallback. */
  public static String orEnv(String value, String envVariable, String fallback) {
    if (value != null) {
      return value;
    }
    String fromEnv = envVariable == null ? null : System.getenv(envVariable);
    return fromEnv != null && !fromEnv.isBlank() ? fromEnv : fallback;
  }

  /** A port number (0-65535) given to {@code option}. */
  public static int port(String option, String value) {
    try {
      int port = Integer.parseInt(value.trim());
      if (port < 0 || port > 65535) {
        throw new NumberFormatException();
      }
      return port;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a port number (0-65535), was '" + value + "'");
    }
  }

  /** A whole number of seconds from 1 to {@code max} given to {@code option}. */
  public static int seconds(String option, String value, int max) {
    try {
      int seconds = Integer.parseInt(value.trim());
      if (seconds < 1 || seconds > max) {
        throw new NumberFormatException();
      }
      return seconds;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " must be a whole number of seconds from 1 to " + max + ", was '"
          + value + "'");
    }
  }

  /**
   * The options given on the command line, by long name, as typed (for commands that validate a flag map
   * themselves: bench, simulate).
   */
  public static Map<String, String> given(CommandLine.ParseResult parsed) {
    Map<String, String> flags = new LinkedHashMap<>();
    for (OptionSpec option : parsed.matchedOptions()) {
      if (!option.usageHelp()) {
        List<String> values = option.originalStringValues();
        flags.put(option.longestName(), values.isEmpty() ? "" : values.get(values.size() - 1));
      }
    }
    return flags;
  }

  /**
   * Parses {@code args} for a command object outside {@code main} (tests): a usage error becomes an
   * {@link IllegalArgumentException} with picocli's message, which names the option.
   */
  public static CommandLine.ParseResult parse(Object command, List<String> args) {
    try {
      return new CommandLine(command).parseArgs(args.toArray(String[]::new));
    } catch (ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  /** "heteroflow dev: Unknown option: '--frob'" and where the help is; exit 2. */
  static int usageError(ParameterException e, String[] args) {
    CommandLine command = e.getCommandLine();
    PrintWriter err = command.getErr();
    err.println(command.getCommandSpec().qualifiedName() + ": " + e.getMessage());
    if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, err)) {
      err.println("See '" + command.getCommandSpec().qualifiedName() + " --help'.");
    }
    err.flush();
    return USAGE;
  }

  /** A failure while a command ran: a bad value (2), a refusal (1, message only), anything else (1, with trace). */
  static int failure(Exception e, CommandLine command) {
    PrintWriter err = command.getErr();
    String name = command.getCommandSpec().qualifiedName();
    Throwable cause = e;
    if (cause instanceof Refusal) {
      err.println(name + ": " + cause.getMessage());
      err.flush();
      return FAILED;
    }
    if (cause instanceof IllegalArgumentException) {
      err.println(name + ": " + cause.getMessage());
      err.println("See '" + name + " --help'.");
      err.flush();
      return USAGE;
    }
    err.println(name + " failed: " + e);
    e.printStackTrace(err);
    err.flush();
    return FAILED;
  }
}
