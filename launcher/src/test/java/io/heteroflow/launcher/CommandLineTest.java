package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The command line as users type it (picocli, no jar needed): help of every subcommand with an example,
 * usage errors that exit 2 and name the option. Only arguments that end before a command would start run.
 */
class CommandLineTest {
  static final List<String> SUBCOMMANDS = List.of("dev", "server", "agent", "postgres", "bench", "simulate", "certs");

  /** Exit status, standard output and standard error of one command line. */
  record Run(int status, String out, String err) {
    static Run of(String... args) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      CommandLine cli = Main.commandLine();
      cli.setOut(new PrintWriter(out, true));
      cli.setErr(new PrintWriter(err, true));
      int status = cli.execute(args);
      return new Run(status, out.toString(), err.toString());
    }
  }

  @Test
  void helpAndDashDashHelpListEverySubcommand() {
    List<String> listed = new ArrayList<>(SUBCOMMANDS);
    listed.add("help");
    // every registered subcommand (bench comes from its own module) is one the help must list, and no other
    assertEquals(Set.copyOf(listed), Main.commandLine().getSubcommands().keySet());
    for (String[] args : List.of(new String[] {"help"}, new String[] {"--help"})) {
      Run run = Run.of(args);
      assertEquals(0, run.status(), run.err());
      for (String subcommand : listed) {
        assertTrue(run.out().lines().anyMatch(line -> line.trim().startsWith(subcommand + " ")),
            String.join(" ", args) + " lists " + subcommand + ":\n" + run.out());
      }
    }
  }

  @Test
  void everySubcommandHasHelpWithAnExample() {
    for (String subcommand : SUBCOMMANDS) {
      for (String help : List.of("--help", "-h")) {
        Run run = Run.of(subcommand, help);
        assertEquals(0, run.status(), subcommand + " " + help + ": " + run.err());
        assertTrue(run.out().contains("Usage: heteroflow " + subcommand), run.out());
        assertTrue(run.out().contains("Examples:") && run.out().contains("java -jar heteroflow.jar " + subcommand),
            subcommand + " " + help + " shows an example:\n" + run.out());
      }
      Run viaHelp = Run.of("help", subcommand);
      assertEquals(0, viaHelp.status());
      assertTrue(viaHelp.out().contains("Usage: heteroflow " + subcommand), viaHelp.out());
    }
  }

  /** {@code subcommand, arguments, the text the error must contain}: each exits 2 before anything starts. */
  private static final List<List<String>> USAGE_ERRORS = List.of(
      List.of("dev --frobnicate 1", "'--frobnicate'"),
      List.of("simulate --help2", "'--help2'"),
      List.of("server --bogus", "'--bogus'"),
      List.of("agent --cluster-hosts 10.0.0.1", "'--cluster-hosts'"),
      List.of("postgres --prot 5432", "'--prot'"),
      List.of("bench --frobnicate 1", "'--frobnicate'"),
      List.of("dev --http-port", "'--http-port'"),
      List.of("server --pg-url", "'--pg-url'"),
      List.of("agent --simulate", "'--simulate'"),
      List.of("postgres --port", "'--port'"),
      List.of("bench --json", "'--json'"),
      List.of("simulate --pods", "'--pods'"),
      List.of("dev --http-port eighty", "--http-port must be a port number"),
      List.of("postgres --port 70000", "--port must be a port number"),
      List.of("agent --executor podman", "--executor must be process or docker"),
      List.of("agent --public-ip gpu-07.example.com", "--public-ip (or HETEROFLOW_PUBLIC_IPS): public IP"),
      List.of("agent --public-ip 203.0.113.7/32", "--public-ip (or HETEROFLOW_PUBLIC_IPS): public IP"),
      List.of("agent --public-ip", "'--public-ip'"),
      List.of("bench --scenario huge", "--scenario must be one of"),
      List.of("simulate --seeds 9-1", "--seeds"),
      List.of("dev --http-port 1 --http-port 2", "'--http-port'"),
      List.of("dev --preempt-timeout-seconds 0", "--preempt-timeout-seconds must be a whole number of seconds"),
      List.of("dev --preempt-timeout-seconds soon", "--preempt-timeout-seconds must be a whole number of seconds"),
      List.of("server --pg-url postgresql://u:p@127.0.0.1:1/db --preempt-timeout-seconds -5",
          "--preempt-timeout-seconds must be a whole number of seconds"),
      List.of("server --pg-url postgresql://u:p@127.0.0.1:1/db --preempt-timeout-seconds 86401",
          "--preempt-timeout-seconds must be a whole number of seconds from 1 to 86400"),
      List.of("server --pg-url postgresql://u:p@127.0.0.1:1/db --tls-cert /etc/hostname", "--tls-key is required"),
      List.of("server --pg-url postgresql://u:p@127.0.0.1:1/db --tls-key /etc/hostname", "--tls-cert is required"),
      List.of("server --pg-url postgresql://u:p@127.0.0.1:1/db --tls-cert /no/cert.pem --tls-key /etc/hostname",
          "--tls-cert: no readable file /no/cert.pem"),
      List.of("frobnicate", "'frobnicate'"));

  @Test
  void aUsageErrorExitsTwoAndNamesTheOption() {
    for (List<String> row : USAGE_ERRORS) {
      Run run = Run.of(row.get(0).split(" "));
      assertEquals(2, run.status(), row.get(0) + ": " + run.err() + run.out());
      assertTrue(run.err().contains(row.get(1)), row.get(0) + " names " + row.get(1) + ":\n" + run.err());
      assertFalse(run.err().contains("Exception") || run.err().contains("\tat "), "no stack trace:\n" + run.err());
    }
  }

  @Test
  void serverWithoutADatabaseUrlSaysWhichOptionOrVariable() {
    // only meaningful where the variable is not set in the test's environment
    if (System.getenv("HETEROFLOW_PG_URL") == null) {
      Run run = Run.of("server", "--http-port", "0");
      assertEquals(2, run.status(), run.err());
      assertTrue(run.err().contains("--pg-url (or HETEROFLOW_PG_URL) is required"), run.err());
    }
  }
}
