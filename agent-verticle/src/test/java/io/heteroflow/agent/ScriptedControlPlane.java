package io.heteroflow.agent;

import io.heteroflow.agent.transport.AgentTransport;
import io.heteroflow.protocol.BusAddresses;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * An agent's transport that answers like the control plane: the run in the first heartbeat's reply, claims
 * answered by {@code claims} (given the claim's number, 0 first; granted by default), and the
 * first report kept in {@link #report}.
 */
final class ScriptedControlPlane implements AgentTransport {
  private final JsonObject run;
  private final IntFunction<Future<JsonObject>> claims;
  private boolean delivered;
  final AtomicInteger claimRequests = new AtomicInteger();
  final AtomicInteger reportRequests = new AtomicInteger();
  final Promise<JsonObject> report = Promise.promise();
  Function<JsonObject, Future<JsonObject>> reports = body -> Future.succeededFuture(new JsonObject().put("v", 1));
  /** The agent's message handlers by address (run and stop pushes), for a test to deliver to. */
  final Map<String, Consumer<JsonObject>> handlers = new ConcurrentHashMap<>();

  ScriptedControlPlane(JsonObject run) {
    this(run, attempt -> Future.succeededFuture(new JsonObject().put("v", 1).put("claimed", true)));
  }

  ScriptedControlPlane(JsonObject run, IntFunction<Future<JsonObject>> claims) {
    this.run = run;
    this.claims = claims;
  }

  @Override
  public Future<JsonObject> request(String address, JsonObject body) {
    switch (address) {
      case BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_BEAT -> {
        JsonArray runs = new JsonArray();
        if (!delivered) {
          delivered = true;
          runs.add(run);
        }
        return Future.succeededFuture(new JsonObject().put("v", 1).put("applied", true).put("run", runs));
      }
      case BusAddresses.TASK_CLAIM -> {
        return claims.apply(claimRequests.getAndIncrement());
      }
      case BusAddresses.TASK_REPORT -> {
        reportRequests.incrementAndGet();
        report.tryComplete(body);
        return reports.apply(body);
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
    return Future.succeededFuture();
  }
}
