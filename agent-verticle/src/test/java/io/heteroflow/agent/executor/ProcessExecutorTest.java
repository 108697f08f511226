package io.heteroflow.agent.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Checkpoint;
import java.time.Instant;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real processes: graceful stop, SIGKILL after the grace period, timeouts, and stops while every worker is busy;
 * each task a process group of its own that is ended whole (stop, timeout, and the main process exiting with
 * children left behind); an environment built from nothing, without the agent's secrets (set for this JVM by
 * the module's surefire configuration).
 */
class ProcessExecutorTest {
  private static final List<String> SECRETS = List.of("HETEROFLOW_ADMIN_TOKEN", "HETEROFLOW_PG_URL");
  private static Vertx vertx;
  private static ProcessExecutor executor;
  private static Path scratch;

  @BeforeAll
  static void start() throws Exception {
    vertx = Vertx.vertx();
    scratch = Files.createTempDirectory("process-test-scratch");
    executor = new ProcessExecutor(vertx, Files.createTempDirectory("process-test"), 2, Duration.ofSeconds(2));
  }

  @AfterAll
  static void stop() {
    executor.close();
    vertx.close();
  }

  private static RunSpec spec(String id, String script, int timeout) {
    return new RunSpec(id, null, List.of("sh", "-c", script), Map.of("GREETING", "hi"), timeout, GpuVendor.NVIDIA,
        List.of());
  }

  private static ExitReport await(io.vertx.core.Future<ExitReport> future) throws Exception {
    return future.await(30, TimeUnit.SECONDS);
  }

  private static void awaitLog(String id, String text) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!executor.logs(id, 1000).contains(text) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
  }

  @Test
  void aTaskThatTrapsSigtermStopsGracefully() throws Exception {
    var running = executor.start(spec("graceful", "trap 'echo got SIGTERM; exit 0' TERM; echo ready;"
        + " while true; do sleep 0.1; done", 60));
    awaitLog("graceful", "ready");
    assertTrue(executor.stop("graceful"));
    ExitReport report = await(running);
    assertEquals(TaskStatus.STOPPED, report.outcome());
    assertEquals(0, report.exitCode());
    // SIGTERM goes to the whole group: the shell's foreground sleep dies of it too (sh may say so)
    assertTrue(report.logTail().matches("ready\n(Terminated\n)?got SIGTERM\n"), report.logTail());
  }

  @Test
  void aTaskIgnoringSigtermIsKilledAfterTheGracePeriodWithItsWholeGroup() throws Exception {
    // the ignored SIGTERM is inherited by the background child: only SIGKILL of the group ends it
    Path pidFile = scratch.resolve("stubborn.pid");
    var running = executor.start(spec("stubborn", "trap '' TERM; sleep 300 & echo $! > " + pidFile
        + "; echo ready; while true; do sleep 0.1; done", 60));
    awaitLog("stubborn", "ready");
    long child = Long.parseLong(Files.readString(pidFile).trim());
    assertTrue(live(child), "the background child runs");
    long started = System.nanoTime();
    executor.stop("stubborn");
    ExitReport report = await(running);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(TaskStatus.STOPPED, report.outcome());
    assertEquals(137, report.exitCode(), "SIGKILL");
    assertTrue(tookMs >= 1900, "waited the 2 s grace first, took " + tookMs + " ms");
    assertFalse(live(child), "the background child was killed with the group");
  }

  @Test
  void aTaskIsStoppedWithItsOwnTerminationGraceNotTheExecutorsDefault() throws Exception {
    RunSpec stubborn = new RunSpec("own-grace", null, List.of("sh", "-c", "trap '' TERM; echo ready;"
        + " while true; do sleep 0.1; done"), Map.of(), 60, GpuVendor.NVIDIA, List.of(), Duration.ofMillis(300), null);
    var running = executor.start(stubborn);
    awaitLog("own-grace", "ready");
    long started = System.nanoTime();
    executor.stop("own-grace");
    ExitReport report = await(running);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(137, report.exitCode(), "SIGKILL after the grace");
    assertTrue(tookMs >= 250 && tookMs < 1900, "the task's 0.3 s, not the executor's 2 s: took " + tookMs + " ms");
  }

  private static RunSpec checkpointing(String id, String script, int checkpointSeconds) {
    return new RunSpec(id, null, List.of("sh", "-c", script), Map.of(), 60, GpuVendor.NVIDIA, List.of(), null,
        new Checkpoint("SIGUSR1", checkpointSeconds));
  }

  @Test
  void aStopAsksForTheCheckpointFirstAndSignalsTermOnlyOnceTheFileIsWritten() throws Exception {
    var running = executor.start(checkpointing("ckpt", "trap 'sleep 0.5; echo saved > \"$HETEROFLOW_CHECKPOINT_FILE\";"
        + " echo checkpointed' USR1; trap 'echo term; exit 0' TERM; echo ready; while true; do sleep 0.1; done", 30));
    awaitLog("ckpt", "ready");
    Instant asked = Instant.now();
    executor.stop("ckpt");
    ExitReport report = await(running);
    assertEquals(TaskStatus.STOPPED, report.outcome());
    assertEquals(0, report.exitCode(), "the TERM trap ran after the checkpoint");
    assertTrue(report.logTail().matches("(?s)ready\n.*checkpointed\n(Terminated\n)?term\n"), report.logTail());
    assertTrue(report.lastCheckpointAt() != null && !report.lastCheckpointAt().isBefore(asked.minusSeconds(1)),
        "the file's time is reported: " + report.lastCheckpointAt());
  }

  @Test
  void aTaskThatNeverWritesItsCheckpointIsStoppedAfterTheCheckpointTimeout() throws Exception {
    var running = executor.start(checkpointing("no-ckpt", "trap '' USR1; trap 'echo term; exit 0' TERM; echo ready;"
        + " while true; do sleep 0.1; done", 1));
    awaitLog("no-ckpt", "ready");
    long started = System.nanoTime();
    executor.stop("no-ckpt");
    ExitReport report = await(running);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(0, report.exitCode(), "SIGTERM came after the 1 s wait");
    assertTrue(tookMs >= 950, "waited the checkpoint timeout first: " + tookMs + " ms");
    assertEquals(null, report.lastCheckpointAt(), "no file written: nothing reported");
  }

  @Test
  void aStopReachesTheBackgroundChildrenToo() throws Exception {
    Path pidFile = scratch.resolve("parent.pid");
    var running = executor.start(spec("parent", "sleep 300 & echo $! > " + pidFile + "; echo ready; wait", 60));
    awaitLog("parent", "ready");
    long child = Long.parseLong(Files.readString(pidFile).trim());
    assertTrue(live(child), "the background child runs");
    long started = System.nanoTime();
    executor.stop("parent");
    assertEquals(TaskStatus.STOPPED, await(running).outcome());
    assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) < 1900, "SIGTERM was enough");
    assertFalse(live(child), "SIGTERM reached the child, not only the shell");
  }

  @Test
  void aTimeoutEndsTheWholeGroup() throws Exception {
    Path pidFile = scratch.resolve("late.pid");
    ExitReport report = await(executor.start(spec("late", "sleep 300 & echo $! > " + pidFile + "; wait", 1)));
    assertEquals("TimedOut", report.reasonCode());
    assertFalse(live(Long.parseLong(Files.readString(pidFile).trim())), "the child did not outlive the timeout");
  }

  @Test
  void whatTheMainProcessLeavesRunningEndsWithTheTask() throws Exception {
    Path pidFile = scratch.resolve("leaver.pid");
    ExitReport report = await(executor.start(spec("leaver", "sleep 300 & echo $! > " + pidFile + "; echo done", 60)));
    assertEquals(TaskStatus.SUCCEEDED, report.outcome());
    assertEquals(0, report.exitCode());
    assertFalse(live(Long.parseLong(Files.readString(pidFile).trim())), "no orphan after the task ended");
  }

  @Test
  void eachTaskLeadsAProcessGroupAndSessionOfItsOwn() throws Exception {
    // /proc/PID/stat: pid (comm) state ppid pgrp session; setsid did not fork, so the shell is the leader
    ExitReport report = await(executor.start(spec("leader", "cut -d' ' -f1,5,6 /proc/$$/stat", 60)));
    String[] ids = report.logTail().trim().split(" ");
    assertEquals(ids[0], ids[1], "pid = process group id: " + report.logTail());
    assertEquals(ids[0], ids[2], "pid = session id: " + report.logTail());
  }

  @Test
  void aTaskEnvironmentIsTheAllowListThenHeteroFlowsThenItsOwnAndNoSecret() throws Exception {
    SECRETS.forEach(name -> assertTrue(System.getenv(name) != null, name + " is set for this JVM (surefire)"));
    Map<String, String> injected = Map.of("CUDA_VISIBLE_DEVICES", "1", "HETEROFLOW_TASK_ID", "env-exact",
        "GREETING", "hi");
    ExitReport report = await(executor.start(new RunSpec("env-exact", null, List.of("env"), injected, 60,
        GpuVendor.NVIDIA, List.of(1))));
    assertEquals(TaskStatus.SUCCEEDED, report.outcome(), report.logTail());
    Map<String, String> seen = new TreeMap<>();
    report.logTail().lines().forEach(line -> seen.put(line.substring(0, line.indexOf('=')),
        line.substring(line.indexOf('=') + 1)));
    Path work = executor.workDir("env-exact");
    Map<String, String> expected = new TreeMap<>(injected);
    expected.put("PATH", System.getenv("PATH"));
    expected.put("LANG", "C.UTF-8");
    expected.put("TZ", "UTC");
    expected.put("HOME", work.resolve("home").toString());
    expected.put("TMPDIR", work.resolve("tmp").toString());
    assertEquals(expected, seen);
    SECRETS.forEach(name -> assertFalse(report.logTail().contains(System.getenv(name)), name + "'s value leaked"));
  }

  @Test
  void homeAndTmpdirArePrivateToTheTaskAndRemovedWhenItEnds() throws Exception {
    ExitReport report = await(executor.start(spec("dirs", "touch $HOME/.cache $TMPDIR/scratch"
        + " && chmod 000 $TMPDIR && stat -c %a $HOME && echo $HOME $TMPDIR", 60)));
    assertEquals(TaskStatus.SUCCEEDED, report.outcome(), report.logTail());
    List<String> lines = report.logTail().lines().toList();
    assertEquals("700", lines.get(0), "only the agent's user may enter");
    String[] dirs = lines.get(1).split(" ");
    assertTrue(dirs[0].startsWith(executor.workDir("dirs").toString()), lines.get(1));
    assertFalse(Files.exists(Path.of(dirs[0])), "HOME removed");
    assertFalse(Files.exists(Path.of(dirs[1])), "TMPDIR removed, even made unreadable");
    assertFalse(Files.exists(executor.workDir("dirs")), "the task's work directory removed");
  }

  /** A process with this pid exists and is not a zombie. */
  private static boolean live(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void stopsAreNotQueuedBehindRunningTasks() throws Exception {
    var first = executor.start(spec("busy-1", "echo ready; exec sleep 30", 60));
    var second = executor.start(spec("busy-2", "echo ready; exec sleep 30", 60));
    awaitLog("busy-1", "ready");
    awaitLog("busy-2", "ready");
    executor.stop("busy-1");
    executor.stop("busy-2");
    assertEquals(TaskStatus.STOPPED, await(first).outcome());
    assertEquals(TaskStatus.STOPPED, await(second).outcome());
  }

  @Test
  void exitCodesTimeoutsAndEnvironment() throws Exception {
    ExitReport ok = await(executor.start(spec("env", "echo $GREETING", 60)));
    assertEquals(TaskStatus.SUCCEEDED, ok.outcome());
    assertEquals("hi\n", ok.logTail());
    ExitReport failed = await(executor.start(spec("fail", "exit 7", 60)));
    assertEquals(TaskStatus.FAILED, failed.outcome());
    assertEquals(7, failed.exitCode());
    ExitReport slow = await(executor.start(spec("slow", "exec sleep 30", 1)));
    assertEquals(TaskStatus.FAILED, slow.outcome());
    assertEquals("TimedOut", slow.reasonCode());
    ExitReport missing = await(executor.start(new RunSpec("missing", null, List.of("/no/such/binary"), Map.of(), 60,
        null, List.of())));
    assertEquals("StartFailed", missing.reasonCode());
  }
}
