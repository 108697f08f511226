package io.heteroflow.launcher;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** {@code java -jar target/heteroflow.jar …} as a real child process, with its output in a file, for the ITs. */
final class JarProcess implements AutoCloseable {
  static final String TOKEN = "jar-process-it-token";
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /** Every process started, so a timeout can show what each live one was doing. */
  private static final List<JarProcess> STARTED = new java.util.concurrent.CopyOnWriteArrayList<>();
  final Process process;
  final Path output;
  /** The HTTP port of a control plane started by a test (0 for other processes). */
  int port;

  private JarProcess(Process process, Path output) {
    this.process = process;
    this.output = output;
  }

  static JarProcess start(Map<String, String> env, String... args) throws IOException {
    return start(List.of(), env, args);
  }

  /** The jar run as another user ({@code setpriv}), so firewall rules can tell its packets by owner. */
  static JarProcess startAs(int uid, Map<String, String> env, String... args) throws IOException {
    return start(List.of("setpriv", "--reuid", String.valueOf(uid), "--regid", String.valueOf(uid), "--clear-groups"),
        env, args);
  }

  private static JarProcess start(List<String> prefix, Map<String, String> env, String... args) throws IOException {
    Path output = Files.createTempFile("heteroflow-it-", ".log");
    List<String> command = new ArrayList<>(prefix);
    command.addAll(List.of(ProcessHandle.current().info().command().orElse("java"), "-jar",
        Path.of("target", "heteroflow.jar").toAbsolutePath().toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().put("HETEROFLOW_ADMIN_TOKEN", TOKEN);
    // a cluster of this test run only: two test runs on one machine never join each other's Hazelcast cluster
    builder.environment().put("HETEROFLOW_CLUSTER_NAME", "heteroflow-it-" + ProcessHandle.current().pid());
    builder.environment().putAll(env);
    JarProcess started = new JarProcess(builder.start(), output);
    STARTED.add(started);
    return started;
  }

  /** Output tails and thread dumps of every live process this test run started (jcmd of the running JDK), for a timeout. */
  private static String threadDumps() {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    StringBuilder dumps = new StringBuilder();
    for (JarProcess each : STARTED) {
      if (!each.process.isAlive()) {
        continue;
      }
      dumps.append("\n--- threads of ").append(each.process.info().commandLine().orElse("pid " + each.process.pid()))
          .append('\n');
      String out = each.output();
      dumps.append("output tail:\n").append(out.substring(Math.max(0, out.length() - 3000))).append('\n');
      try {
        Process dump = new ProcessBuilder(jcmd.toString(), String.valueOf(each.process.pid()), "Thread.print")
            .redirectErrorStream(true).start();
        dumps.append(new String(dump.getInputStream().readAllBytes()));
      } catch (IOException e) {
        dumps.append("jcmd failed: ").append(e.getMessage());
      }
    }
    return dumps.toString();
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  String output() {
    try {
      return Files.readString(output);
    } catch (IOException e) {
      return "";
    }
  }

  void eventually(Duration timeout, String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError("the process exited (" + process.exitValue() + ") while waiting for " + what
            + "; its output:\n" + output());
      }
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (IllegalStateException notYet) {
        // connection refused while starting: keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("timed out waiting for " + what + "; output:\n" + output() + threadDumps());
  }

  static HttpResponse<String> get(String url) {
    return send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN).GET().build());
  }

  static HttpResponse<String> post(String url, String body) {
    return send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + TOKEN)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  static JsonObject json(HttpResponse<String> response) {
    return response.body().startsWith("{") ? new JsonObject(response.body()) : new JsonObject();
  }

  private static HttpResponse<String> send(HttpRequest request) {
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
    }
  }
}
