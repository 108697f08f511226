package io.heteroflow.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.simulated.SimulatedNode;
import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.FailureCode;
import io.heteroflow.protocol.message.Stop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An agent whose heartbeats are refused as node_held (another live agent process has its node id): it logs that
 * once, runs and reports nothing pushed to the node meanwhile, keeps heartbeating, takes the node over when its
 * heartbeats are applied again, and releases the node at a clean stop.
 */
class AgentNodeHeldTest {
  private static final String NODE = "n-held";
  private static final int REFUSED = 8;
  private final Vertx vertx = Vertx.vertx();
  private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord record) {
      logged.add(record);
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
  };
  private final Logger agentLog = Logger.getLogger(AgentVerticle.class.getName());

  @AfterEach
  void close() {
    agentLog.removeHandler(capture);
    vertx.close().await();
  }

  /** A control plane that refuses the first {@link #REFUSED} heartbeats as node_held, then applies them. */
  private static final class HeldControlPlane implements AgentTransport {
    final AtomicInteger heartbeats = new AtomicInteger();
    final AtomicInteger claims = new AtomicInteger();
    final AtomicInteger reports = new AtomicInteger();
    final List<JsonObject> beats = new CopyOnWriteArrayList<>();
    final List<JsonObject> releases = new CopyOnWriteArrayList<>();
    final Map<String, Consumer<JsonObject>> handlers = new ConcurrentHashMap<>();
    final Map<String, Function<JsonObject, Future<JsonObject>>> requestHandlers = new ConcurrentHashMap<>();
    final JsonObject run;

    HeldControlPlane(JsonObject run) {
      this.run = run;
    }

    @Override
    public Future<JsonObject> request(String address, JsonObject body) {
      switch (address) {
        case BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_BEAT -> {
          beats.add(body);
          if (heartbeats.incrementAndGet() <= REFUSED) {
            return Future.failedFuture(FailureCode.CONFLICT.refusal("node_held: node " + NODE + " is held by another"
                + " live agent process since 2026-12-02T10:00:00Z (its last heartbeat 0.4 s ago); this agent process"
                + " is refused until the holder is silent for 6 s or releases the node"));
          }
          JsonArray runs = heartbeats.get() == REFUSED + 1 ? new JsonArray().add(run) : new JsonArray();
          return Future.succeededFuture(new JsonObject().put("v", 1).put("applied", true).put("run", runs));
        }
        case BusAddresses.TASK_CLAIM -> {
          claims.incrementAndGet();
          return Future.succeededFuture(new JsonObject().put("v", 1).put("claimed", true));
        }
        case BusAddresses.TASK_REPORT -> {
          reports.incrementAndGet();
          return Future.succeededFuture(new JsonObject().put("v", 1).put("settled", true));
        }
        case BusAddresses.NODE_RELEASE -> {
          releases.add(body);
          return Future.succeededFuture(new JsonObject().put("v", 1).put("released", true));
        }
        default -> {
          return Future.failedFuture("unexpected " + address);
        }
      }
    }

    @Override
    public Future<Void> onMessage(String address, Consumer<JsonObject> handler) {
      handlers.put(address, handler);
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> onRequest(String address, Function<JsonObject, Future<JsonObject>> handler) {
      requestHandlers.put(address, handler);
      return Future.succeededFuture();
    }
  }

  private static JsonObject run(String command) {
    return new JsonObject().put("v", 1).put("task_id", UUID.randomUUID().toString()).put("term", 1L)
        .put("command", new JsonArray().add("sh").add("-c").add(command)).put("gpu_indices", new JsonArray().add(0));
  }

  private long count(Level level, String text) {
    return logged.stream().filter(r -> r.getLevel() == level && r.getMessage().contains(text)).count();
  }

  private void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      vertx.timer(20).await();
    }
  }

  @Test
  void aRefusedAgentLogsItOnceRunsNothingKeepsHeartbeatingTakesOverAndReleasesAtStop() throws Exception {
    agentLog.addHandler(capture);
    HeldControlPlane controlPlane = new HeldControlPlane(run("true"));
    SimulatedNode node = new SimulatedNode(NODE, GpuVendor.NVIDIA, "H100", 1, 81920, 8, 64, 5, 1024, null, null,
        null, null, List.of("127.0.0.1"), null);
    String deployment = vertx.deployVerticle(new AgentVerticle(node, new ProcessExecutor(vertx,
        Files.createTempDirectory("agent-held"), 2, Duration.ofSeconds(1)), 50, controlPlane)).await();
    await(() -> controlPlane.heartbeats.get() >= 3, "three refused heartbeats");

    // while refused: a run and a stop pushed to the node's addresses are the holder's, not this process's
    vertx.runOnContext(v -> {
      controlPlane.handlers.get(BusAddresses.agentRun(NODE)).accept(run("true"));
      controlPlane.handlers.get(BusAddresses.agentStop(NODE)).accept(new Stop(UUID.randomUUID()).toJson());
    });
    JsonObject logs = new JsonObject().put("v", 1).put("task_id", UUID.randomUUID().toString());
    Future<JsonObject> logsAnswer = Future.<Future<JsonObject>>future(p -> vertx.runOnContext(v ->
        p.complete(controlPlane.requestHandlers.get(BusAddresses.agentLogs(NODE)).apply(logs)))).compose(f -> f);
    Throwable refusedLogs = logsAnswer.transform(done -> Future.succeededFuture(done.cause())).await();
    assertEquals(FailureCode.CONFLICT, FailureCode.of(refusedLogs), "a logs request for a task it does not know");
    assertTrue(refusedLogs.getMessage().startsWith("node_held"), refusedLogs.getMessage());
    await(() -> controlPlane.heartbeats.get() >= REFUSED, "every refused heartbeat");
    assertEquals(0, controlPlane.claims.get(), "a refused agent claims nothing");
    assertEquals(0, controlPlane.reports.get(), "nor reports a stop of a task it never ran");
    assertEquals(1, count(Level.WARNING, "node_held: node " + NODE), "the refusal is logged once: " + logged.stream()
        .map(LogRecord::getMessage).toList());

    await(() -> controlPlane.claims.get() == 1, "the run of the first applied heartbeat claimed");
    await(() -> controlPlane.reports.get() == 1, "its report");
    assertEquals(1, count(Level.INFO, "taken over by this agent process"));
    int beats = controlPlane.heartbeats.get();
    await(() -> controlPlane.heartbeats.get() >= beats + 3, "heartbeats go on");

    vertx.undeploy(deployment).await();
    assertEquals(1, controlPlane.releases.size(), "a clean stop releases the node");
    JsonObject release = controlPlane.releases.get(0);
    assertEquals(NODE, release.getString("node_id"));
    assertEquals(controlPlane.beats.get(0).getString("boot_id"), release.getString("boot_id"), "this process's boot");
    int atStop = controlPlane.heartbeats.get();
    vertx.timer(300).await();
    assertEquals(atStop, controlPlane.heartbeats.get(), "no heartbeat after the stop");
  }
}
