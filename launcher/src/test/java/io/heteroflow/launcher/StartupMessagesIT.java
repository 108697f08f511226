package io.heteroflow.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.store.Database;
import io.heteroflow.testsupport.TestPostgres;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a newcomer sees from the real jar when a start cannot go on: one line that names the port or the file
 * and the option that changes it, a non-zero exit, no stack trace; and Hazelcast's start-up chatter stays out.
 */
class StartupMessagesIT {
  private JarProcess process;

  @AfterEach
  void stop() {
    if (process != null) {
      process.close();
    }
  }

  /** Runs the jar to its end (at most 120 s) and answers its exit status. */
  private int runToEnd(String... args) throws Exception {
    process = JarProcess.start(Map.of(), args);
    assertTrue(process.process.waitFor(120, TimeUnit.SECONDS), "the jar ends by itself:\n" + process.output());
    return process.process.exitValue();
  }

  private static void assertNoStackTrace(String output) {
    assertFalse(output.contains("Exception") || output.contains("\tat "), "no stack trace:\n" + output);
  }

  @Test
  void helpThroughTheJarListsEverySubcommand() throws Exception {
    assertEquals(0, runToEnd("help"));
    for (String subcommand : CommandLineTest.SUBCOMMANDS) {
      assertTrue(process.output().lines().anyMatch(line -> line.trim().startsWith(subcommand + " ")),
          subcommand + ":\n" + process.output());
    }
  }

  @Test
  void aBusyHttpPortIsNamedWithTheOptionThatChangesIt() throws Exception {
    Database db = TestPostgres.freshDatabase();
    String url = "postgresql://" + db.options().getUser() + ":" + db.options().getPassword() + "@"
        + db.options().getHost() + ":" + db.options().getPort() + "/" + db.options().getDatabase();
    try (ServerSocket taken = new ServerSocket(0)) {
      int status = runToEnd("server", "--pg-url", url, "--http-port", String.valueOf(taken.getLocalPort()));
      String output = process.output();
      assertEquals(1, status, output);
      assertTrue(output.contains("heteroflow server: HTTP port " + taken.getLocalPort() + " is already in use")
          && output.contains("--http-port"), output);
      assertNoStackTrace(output);
      assertHazelcastSaysNothingBelowWarning(output);
    }
  }

  /** java.util.logging prints a record as "date source" then "LEVEL: message": no INFO record of Hazelcast. */
  private static void assertHazelcastSaysNothingBelowWarning(String output) {
    List<String> lines = output.lines().toList();
    assertTrue(lines.stream().anyMatch(line -> line.contains("io.heteroflow") || line.contains("heteroflow server")),
        output);
    for (int i = 0; i + 1 < lines.size(); i++) {
      if (lines.get(i).contains(" com.hazelcast.")) {
        assertFalse(lines.get(i + 1).startsWith("INFO:"), "Hazelcast logs at WARNING and above only:\n" + output);
      }
    }
  }

  @Test
  void aBusyPostgresPortIsNamedWithTheOptionThatChangesIt() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) {
      int status = runToEnd("postgres", "--port", String.valueOf(taken.getLocalPort()));
      String output = process.output();
      assertEquals(1, status, output);
      assertTrue(output.contains("port " + taken.getLocalPort() + " is already in use") && output.contains("--port"),
          output);
      assertNoStackTrace(output);
    }
  }

  @Test
  void aMissingTraceFileIsNamedWithItsFlagAndTheTracesSource() throws Exception {
    Path missing = Path.of("target", "no-such-trace", "openb_node_list_gpu_node.csv").toAbsolutePath();
    int status = runToEnd("simulate", "--nodes", missing.toString(), "--pods", "also-missing.csv", "--seeds", "1");
    String output = process.output();
    assertEquals(1, status, output);
    assertTrue(output.contains("heteroflow simulate: --nodes: no such file " + missing), output);
    assertTrue(output.contains("github.com/alibaba/clusterdata") && output.contains("--pods"), output);
    assertNoStackTrace(output);
  }
}
