package io.heteroflow.agent.executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Real processes: graceful stop, SIGKILL after the grace period, timeouts, and stops while every worker is busy. */
class ProcessExecutorTest {
  private static Vertx vertx;
  private static ProcessExecutor executor;

  @BeforeAll
  static void start() throws Exception {
    vertx = Vertx.vertx();
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
    return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
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
    assertEquals("ready\ngot SIGTERM\n", report.logTail());
  }

  @Test
  void aTaskIgnoringSigtermIsKilledAfterTheGracePeriod() throws Exception {
    var running = executor.start(spec("stubborn", "trap '' TERM; echo ready; while true; do sleep 0.1; done", 60));
    awaitLog("stubborn", "ready");
    long started = System.nanoTime();
    executor.stop("stubborn");
    ExitReport report = await(running);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(TaskStatus.STOPPED, report.outcome());
    assertEquals(137, report.exitCode(), "SIGKILL");
    assertTrue(tookMs >= 1900, "waited the 2 s grace first, took " + tookMs + " ms");
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
