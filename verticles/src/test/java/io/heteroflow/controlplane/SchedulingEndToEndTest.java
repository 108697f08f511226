package io.heteroflow.controlplane;

import static io.heteroflow.testsupport.ControlPlaneHarness.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole path in one JVM: control plane on real PostgreSQL, simulated agents on the event bus running
 * real processes; tasks are created through the API, scheduled, claimed, run, stopped and settled.
 */
class SchedulingEndToEndTest {
  private static final String ADMIN = ControlPlaneHarness.ADMIN;
  private static final Duration WAIT = Duration.ofSeconds(30);
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness().agents(List.of(
      ControlPlaneHarness.node("nv-1", GpuVendor.NVIDIA, 2), ControlPlaneHarness.node("asc-1", GpuVendor.ASCEND, 4)));

  @BeforeAll
  static void start() throws Exception {
    eventually(WAIT, "both agents registered",
        () -> get("/api/v1/nodes").getInteger("count") == 2);
  }

  @Test
  void helloRunsOnAnNvidiaCardWithItsVisibilityVariable() throws Exception {
    String id = submit("{\"name\":\"hello\",\"command\":[\"sh\",\"-c\",\"echo hello; echo $CUDA_VISIBLE_DEVICES\"],"
        + "\"gpu_required\":1,\"gpu_type\":\"nvidia\"}");
    JsonObject task = awaitStatus(id, "succeeded");
    assertEquals("nv-1", task.getString("node"));
    assertEquals(0, task.getInteger("exit_code"));
    int card = task.getJsonArray("gpus").getInteger(0);
    String logs = cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body();
    assertEquals("hello\n" + card + "\n", logs);
    assertTrue(task.getString("scheduled_at") != null && task.getString("started_at") != null
        && task.getString("finished_at") != null);
  }

  @Test
  void ascendCardsAreInjectedWithAscendsVariable() throws Exception {
    String id = submit("{\"name\":\"npu\",\"command\":[\"sh\",\"-c\",\"echo $ASCEND_RT_VISIBLE_DEVICES $WORLD_SIZE $RANK\"],"
        + "\"gpu_required\":2,\"gpu_type\":\"ascend\"}");
    JsonObject task = awaitStatus(id, "succeeded");
    List<Object> cards = task.getJsonArray("gpus").getList();
    String logs = cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body().trim();
    assertEquals(cards.get(0) + "," + cards.get(1) + " 1 0", logs);
  }

  @Test
  void aFailingCommandFailsWithItsExitCode() throws Exception {
    String id = submit("{\"name\":\"boom\",\"command\":[\"sh\",\"-c\",\"echo oops >&2; exit 3\"]}");
    JsonObject task = awaitStatus(id, "failed");
    assertEquals(3, task.getInteger("exit_code"));
    assertEquals("ExitCode", task.getJsonObject("reason").getString("code"));
    assertEquals("oops\n", cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body());
  }

  @Test
  void stopTerminatesARunningTaskAndFreesItsCards() throws Exception {
    String id = submit("{\"name\":\"long\",\"command\":[\"sh\",\"-c\",\"echo started; exec sleep 60\"],"
        + "\"gpu_required\":4,\"gpu_type\":\"ascend\"}");
    awaitStatus(id, "running");
    eventually(WAIT, "live logs from the agent",
        () -> call("GET", "/api/v1/tasks/" + id + "/logs").equals("started\n"));
    assertEquals(4, gpuUsed("asc-1"));
    String blocked = submit("{\"name\":\"waits\",\"command\":[\"true\"],\"gpu_required\":1,\"gpu_type\":\"ascend\"}");
    eventually(WAIT, "a reason for the waiting task", () -> reasonCode(blocked).equals("InsufficientResources"));

    JsonObject stopping = cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
    assertTrue(List.of("stopping", "stopped").contains(stopping.getString("status")));
    JsonObject stopped = awaitStatus(id, "stopped");
    assertEquals("StoppedByUser", stopped.getJsonObject("reason").getString("code"));
    awaitStatus(blocked, "succeeded");
    eventually(WAIT, "cards returned", () -> gpuUsed("asc-1") == 0);
  }

  @Test
  void logsShowTheInjectedVariables() throws Exception {
    String id = submit("{\"name\":\"env\",\"command\":[\"sh\",\"-c\",\"echo $HETEROFLOW_TASK_ID $MASTER_ADDR"
        + " $MASTER_PORT $WORLD_SIZE $RANK $CUDA_VISIBLE_DEVICES\"],\"gpu_required\":2,\"gpu_type\":\"nvidia\"}");
    JsonObject task = awaitStatus(id, "succeeded");
    List<Object> cards = task.getJsonArray("gpus").getList();
    int masterPort = task.getInteger("master_port");
    assertTrue(masterPort >= 29500 && masterPort <= 29999, "a port of the master port range: " + masterPort);
    assertEquals(id + " 127.0.0.1 " + masterPort + " 1 0 " + cards.get(0) + "," + cards.get(1) + "\n",
        cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body());
  }

  @Test
  void twoTasksRunningOnOneNodeHaveTheirOwnMasterPorts() throws Exception {
    String command = "\"command\":[\"sh\",\"-c\",\"echo $MASTER_PORT; exec sleep 60\"],\"gpu_type\":\"ascend\"";
    String first = submit("{\"name\":\"ddp-a\"," + command + ",\"gpu_required\":1}");
    String second = submit("{\"name\":\"ddp-b\"," + command + ",\"gpu_required\":1}");
    JsonObject a = awaitStatus(first, "running");
    JsonObject b = awaitStatus(second, "running");
    assertEquals(a.getString("node"), b.getString("node"));
    assertTrue(!a.getInteger("master_port").equals(b.getInteger("master_port")), a.encode() + " " + b.encode());
    for (JsonObject task : List.of(a, b)) {
      eventually(WAIT, "the task's MASTER_PORT in its log", () -> call("GET", "/api/v1/tasks/" + task.getString("id")
          + "/logs").equals(task.getInteger("master_port") + "\n"));
      cp.json("POST", "/api/v1/tasks/" + task.getString("id") + "/stop", ADMIN, null, 202);
    }
    awaitStatus(first, "stopped");
    awaitStatus(second, "stopped");
  }

  @Test
  void aTaskThatTrapsSigtermIsStoppedGracefully() throws Exception {
    String id = submit("{\"name\":\"trap\",\"command\":[\"sh\",\"-c\",\"trap 'echo cleaning up; exit 0' TERM;"
        + " echo ready; while true; do sleep 0.1; done\"]}");
    awaitStatus(id, "running");
    eventually(WAIT, "the task ready", () -> call("GET", "/api/v1/tasks/" + id + "/logs").equals("ready\n"));
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
    JsonObject stopped = awaitStatus(id, "stopped");
    assertEquals(0, stopped.getInteger("exit_code"), "the trap ran and exited cleanly");
    // SIGTERM reaches the task's whole process group: sh may report its foreground sleep "Terminated"
    String logs = cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body();
    assertTrue(logs.matches("ready\n(Terminated\n)?cleaning up\n"), logs);
  }

  @Test
  void aStopRunsTheCheckpointHandshakeAndTheViewShowsWhenTheCheckpointWasWritten() throws Exception {
    String id = submit("{\"name\":\"ckpt\",\"checkpoint\":{\"signal\":\"USR1\",\"timeout_seconds\":20},"
        + "\"command\":[\"sh\",\"-c\",\"trap 'echo saved > $HETEROFLOW_CHECKPOINT_FILE; echo checkpointed' USR1;"
        + " trap 'echo cleaning up; exit 0' TERM; echo ready; while true; do sleep 0.1; done\"]}");
    JsonObject declared = awaitStatus(id, "running");
    assertEquals(new JsonObject().put("signal", "SIGUSR1").put("timeout_seconds", 20), declared.getJsonObject("checkpoint"));
    assertEquals(null, declared.getString("last_checkpoint_at"));
    eventually(WAIT, "the task ready", () -> call("GET", "/api/v1/tasks/" + id + "/logs").equals("ready\n"));
    cp.json("POST", "/api/v1/tasks/" + id + "/stop", ADMIN, null, 202);
    JsonObject stopped = awaitStatus(id, "stopped");
    assertTrue(stopped.getString("last_checkpoint_at") != null, stopped.encodePrettily());
    String logs = cp.call("GET", "/api/v1/tasks/" + id + "/logs", ADMIN, null).body();
    assertTrue(logs.matches("(?s)ready\n.*checkpointed\n(Terminated\n)?cleaning up\n"), logs);
  }

  @Test
  void aTaskPastItsTimeoutFails() throws Exception {
    String id = submit("{\"name\":\"slow\",\"command\":[\"sleep\",\"30\"],\"timeout_seconds\":1}");
    JsonObject task = awaitStatus(id, "failed");
    assertEquals("TimedOut", task.getJsonObject("reason").getString("code"));
  }

  @Test
  void metricsCountTheScheduler() throws Exception {
    String id = submit("{\"name\":\"counted\",\"command\":[\"true\"],\"gpu_required\":1}");
    awaitStatus(id, "succeeded");
    String metrics = cp.call("GET", "/metrics", null, null).body();
    Matcher binds = Pattern.compile("(?m)^heteroflow_binds_total (\\S+)$").matcher(metrics);
    assertTrue(binds.find(), "heteroflow_binds_total present");
    assertTrue(Double.parseDouble(binds.group(1)) >= 1);
    assertTrue(metrics.contains("heteroflow_scheduling_attempts_total{reason=\"none\",result=\"bound\"}"), metrics);
    assertTrue(metrics.contains("vertx_http_server_requests_total"), "Vert.x HTTP metrics exported");
  }

  private static String submit(String body) throws Exception {
    return cp.json("POST", "/api/v1/tasks", ADMIN, body, 201).getString("id");
  }

  private static JsonObject awaitStatus(String id, String status) throws Exception {
    JsonObject[] last = new JsonObject[1];
    try {
      eventually(WAIT, "task " + id + " " + status, () -> {
        last[0] = get("/api/v1/tasks/" + id);
        return status.equals(last[0].getString("status"));
      });
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; last seen " + last[0], e);
    }
    return last[0];
  }

  private static String reasonCode(String id) {
    JsonObject reason = get("/api/v1/tasks/" + id).getJsonObject("reason");
    return reason == null ? "" : reason.getString("code");
  }

  private static int gpuUsed(String node) {
    return get("/api/v1/nodes/" + node).getInteger("gpu_used");
  }

  private static JsonObject get(String path) {
    return new JsonObject(call("GET", path));
  }

  private static String call(String method, String path) {
    try {
      return cp.call(method, path, ADMIN, null).body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
