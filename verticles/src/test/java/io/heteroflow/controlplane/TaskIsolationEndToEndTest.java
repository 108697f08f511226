package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;
import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.TaskUsers;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A real agent (root, as in CI) runs each tenant's tasks as that tenant's uid: tenant A's task cannot read B's log
 * or working directory nor signal B's process; two tasks of one tenant share a uid. Logs are capped per task (the
 * newest bytes kept, the API saying how many were dropped), served from an offset or as a tail, and streamed in
 * chunks. Without root this test skips, except with CI set, where it fails.
 */
class TaskIsolationEndToEndTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final int CAP = 512 * 1024;
  private static final String RANGE = "20000-20999";
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();
  private static final SimulatedNode NODE = ControlPlaneHarness.node("iso-1", GpuVendor.NVIDIA, 4);
  private static Path base;
  private static String alice;
  private static String bob;

  @BeforeAll
  static void start() throws Exception {
    boolean root = TaskUsers.agentUid() == 0;
    if (System.getenv("CI") != null) {
      assertTrue(root, "CI runs the tests as root: tasks must be able to run as other users");
    }
    assumeTrue(root, "switching task users needs root");
    base = Files.createTempDirectory("heteroflow-isolation-");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwx--x--x"));
    ProcessExecutor executor = new ProcessExecutor(cp.vertx, base.resolve(NODE.id()), 4, Duration.ofSeconds(1),
        TaskUsers.of(RANGE, base), CAP);
    await(cp.vertx.deployVerticle(new AgentVerticle(NODE, executor, 300)));
    eventually(WAIT, "the node registered", () -> cp.get("/api/v1/nodes").getInteger("count") == 1);
    alice = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"alice\"}", 201).getString("token");
    bob = cp.json("POST", "/api/v1/tenants", ControlPlaneHarness.ADMIN, "{\"name\":\"bob\"}", 201).getString("token");
  }

  @Test
  void aTenantsTaskCannotReadAnotherTenantsLogOrWorkDirNorSignalItsProcessButSharesItsOwnUid() throws Exception {
    String bobs = submit(bob, "sh", "-c", "echo uid=$(id -u) pid=$$; echo bobs-secret; exec sleep 60");
    eventually(WAIT, "bob's task running and logging", () -> logs(bob, bobs, "").body().contains("pid="));
    Matcher bobLine = Pattern.compile("uid=(\\d+) pid=(\\d+)").matcher(logs(bob, bobs, "").body());
    assertTrue(bobLine.find());
    int bobUid = Integer.parseInt(bobLine.group(1));
    Path bobLog = base.resolve(NODE.id()).resolve("logs").resolve(bobs).resolve("output.log");
    Path bobWork = base.resolve(NODE.id()).resolve("work").resolve(bobs);
    assertTrue(Files.readString(bobLog).contains("bobs-secret"), "the agent (root) still reads it");
    assertEquals(bobUid, Files.getAttribute(bobLog.getParent(), "unix:uid"));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(bobLog.getParent())));
    assertEquals(bobUid, Files.getAttribute(bobWork, "unix:uid"));
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(bobWork)));

    String probe = "cat " + bobLog + "; echo cat=$?; ls " + bobWork + "; echo ls=$?; kill -0 " + bobLine.group(2)
        + "; echo kill=$?; echo uid=$(id -u)";
    String first = submit(alice, "sh", "-c", probe);
    cp.awaitStatus(first, "succeeded");
    String seen = logs(alice, first, "").body();
    assertTrue(seen.contains("Permission denied") && seen.contains("cat=1"), seen);
    assertTrue(seen.contains("ls=2"), seen);
    assertTrue(seen.contains("Operation not permitted") && seen.contains("kill=1"), seen);
    assertTrue(!seen.contains("bobs-secret"), seen);
    int aliceUid = uidIn(seen);
    assertNotEquals(bobUid, aliceUid);
    assertTrue(aliceUid >= 20000 && aliceUid <= 20999 && bobUid >= 20000 && bobUid <= 20999, aliceUid + " " + bobUid);

    String second = submit(alice, "sh", "-c", "echo uid=$(id -u)");
    cp.awaitStatus(second, "succeeded");
    assertEquals(aliceUid, uidIn(logs(alice, second, "").body()), "one uid per tenant");
    assertEquals(aliceUid, TaskUsers.of(RANGE, base).uidFor("alice"), "the mapping is kept in the data dir");
    cp.call("POST", "/api/v1/tasks/" + bobs + "/stop", bob, null);
  }

  @Test
  void aLogOverTheCapKeepsItsNewestBytesAndTheApiSaysHowManyWereDropped() throws Exception {
    String expected = numbers(200_000);
    String id = submit(alice, "seq", "1", "200000");
    cp.awaitStatus(id, "succeeded");
    HttpResponse<String> whole = logs(alice, id, "");
    long dropped = Long.parseLong(whole.headers().firstValue("X-Log-Dropped-Bytes").orElseThrow());
    assertEquals(String.valueOf(CAP), whole.headers().firstValue("X-Log-Cap-Bytes").orElseThrow());
    assertTrue(whole.body().length() <= CAP && whole.body().length() >= CAP / 2, "kept " + whole.body().length());
    assertEquals(expected.length(), dropped + whole.body().length(), "kept + dropped = written");
    assertEquals(expected.substring((int) dropped), whole.body(), "the newest bytes, in order");

    assertEquals(expected.substring(expected.length() - 100), logs(alice, id, "?tail_bytes=100").body());
    String fromOffset = logs(alice, id, "?offset=" + (expected.length() - 7)).body();
    assertEquals(expected.substring(expected.length() - 7), fromOffset);
    HttpResponse<String> bad = logs(alice, id, "?tail_bytes=-1");
    assertEquals(400, bad.statusCode());
    assertTrue(bad.body().contains("tail_bytes"), bad.body());
  }

  @Test
  void aLogLargerThanOneBusAnswerIsStreamedInChunks() throws Exception {
    String expected = numbers(60_000); // about 340 KB: two answers of at most 256 KiB, kept whole under the cap
    String id = submit(alice, "seq", "1", "60000");
    cp.awaitStatus(id, "succeeded");
    RawResponse response = rawGet("/api/v1/tasks/" + id + "/logs", alice);
    assertTrue(response.head().startsWith("HTTP/1.1 200"), response.head());
    assertTrue(response.head().toLowerCase().contains("transfer-encoding: chunked"), response.head());
    assertTrue(!response.head().toLowerCase().contains("content-length"), response.head());
    assertTrue(response.head().contains("X-Log-Dropped-Bytes: 0"), response.head());
    assertTrue(response.chunks() >= 2, response.chunks() + " chunks");
    assertEquals(expected, response.body());
  }

  /** The status line and headers, the number of chunks and the decoded body of an HTTP/1.1 exchange. */
  private record RawResponse(String head, int chunks, String body) {}

  private static RawResponse rawGet(String path, String token) throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", cp.running.httpPort())) {
      socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token
          + "\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      java.io.DataInputStream in = new java.io.DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
      StringBuilder head = new StringBuilder();
      for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
        head.append(line).append('\n');
      }
      java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
      int chunks = 0;
      for (int size = Integer.parseInt(readLine(in).trim(), 16); size > 0; size = Integer.parseInt(readLine(in).trim(), 16)) {
        byte[] chunk = new byte[size];
        in.readFully(chunk);
        body.write(chunk);
        readLine(in);
        chunks++;
      }
      return new RawResponse(head.toString(), chunks, body.toString(java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  private static String readLine(java.io.DataInputStream in) throws java.io.IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c < 0) {
        throw new java.io.EOFException("the stream ended in a line: " + line);
      }
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }

  private static String submit(String token, String... command) throws Exception {
    String words = java.util.Arrays.stream(command).map(word -> "\"" + word.replace("\"", "\\\"") + "\"")
        .collect(Collectors.joining(","));
    return cp.json("POST", "/api/v1/tasks", token, "{\"name\":\"iso\",\"command\":[" + words + "]}", 201)
        .getString("id");
  }

  private static HttpResponse<String> logs(String token, String id, String query) {
    try {
      return cp.call("GET", "/api/v1/tasks/" + id + "/logs" + query, token, null);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static int uidIn(String log) {
    Matcher matcher = Pattern.compile("uid=(\\d+)").matcher(log);
    assertTrue(matcher.find(), log);
    return Integer.parseInt(matcher.group(1));
  }

  private static String numbers(int last) {
    return IntStream.rangeClosed(1, last).mapToObj(String::valueOf).collect(Collectors.joining("\n", "", "\n"));
  }

}
