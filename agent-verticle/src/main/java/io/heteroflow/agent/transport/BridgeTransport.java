package io.heteroflow.agent.transport;

import io.heteroflow.protocol.message.FailureCode;
import io.heteroflow.protocol.tls.PeerIdentity;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@link AgentTransport} over the control planes' TCP event-bus bridges (mutual TLS; the certificate's CN is the
 * node id). One connection at a time, to one of {@code endpoints}; when it drops, requests in flight fail as
 * unavailable (so {@link Backoff} repeats them), and the transport reconnects after a random delay of up to
 * {@link Settings#spreadMs} (thousands of agents that lost one control plane do not reconnect in step), trying the
 * next endpoint, then backing off with jitter while none answers. Once connected it registers its addresses again.
 * Its state lives on the context of the verticle that first uses it.
 */
public final class BridgeTransport implements AgentTransport {
  private static final Logger LOG = Logger.getLogger(BridgeTransport.class.getName());

  /** A control plane's bridge. */
  public record Endpoint(String host, int port) {
    @Override
    public String toString() {
      return host + ":" + port;
    }
  }

  /** Request timeout, reconnect spread, connect back-off, keep-alive ping and the silence that ends a connection. */
  public record Settings(long timeoutMs, long spreadMs, Backoff connect, long pingMs, int readIdleSeconds) {
    public static final Settings DEFAULTS = new Settings(5000, 5000, new Backoff(500, 10_000, Integer.MAX_VALUE),
        5000, 20);
  }

  private final Vertx vertx;
  private final List<Endpoint> endpoints;
  private final NetClientOptions options;
  private final Settings settings;
  private final Map<String, Consumer<JsonObject>> messages = new LinkedHashMap<>();
  private final Map<String, Function<JsonObject, Future<JsonObject>>> requests = new LinkedHashMap<>();
  private final Map<String, Promise<JsonObject>> pending = new HashMap<>();
  private final Promise<Void> connectedOnce = Promise.promise();
  private NetClient client;
  private NetSocket socket;
  private int endpoint;
  private int failedConnects;
  private long replies;
  private long connections;
  private boolean closed;

  public BridgeTransport(Vertx vertx, List<Endpoint> endpoints, NetClientOptions tls, Settings settings) {
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("a bridge transport needs at least one control plane");
    }
    this.vertx = vertx;
    this.endpoints = List.copyOf(endpoints);
    this.options = new NetClientOptions(tls).setReadIdleTimeout(settings.readIdleSeconds()).setTcpNoDelay(true);
    this.settings = settings;
    this.endpoint = ThreadLocalRandom.current().nextInt(endpoints.size());
  }

  @Override
  public Future<JsonObject> request(String address, JsonObject body) {
    start();
    if (socket == null) {
      return Future.failedFuture(new ReplyException(ReplyFailure.NO_HANDLERS, "no control plane connected"));
    }
    String replyAddress = "hf-reply." + (++replies);
    Promise<JsonObject> answer = Promise.promise();
    pending.put(replyAddress, answer);
    long timer = vertx.setTimer(settings.timeoutMs(), id -> {
      if (pending.remove(replyAddress) != null) {
        answer.tryFail(new ReplyException(ReplyFailure.TIMEOUT, "no answer from " + address + " within "
            + settings.timeoutMs() + " ms"));
      }
    });
    BridgeFrames.write(socket, new JsonObject().put("type", "send").put("address", address)
        .put("replyAddress", replyAddress).put("body", body));
    return answer.future().onComplete(done -> vertx.cancelTimer(timer));
  }

  /** Completes once the transport is connected and has registered the address. */
  @Override
  public Future<Void> onMessage(String address, Consumer<JsonObject> handler) {
    start();
    messages.put(address, handler);
    register(address);
    return connectedOnce.future();
  }

  @Override
  public Future<Void> onRequest(String address, Function<JsonObject, Future<JsonObject>> handler) {
    start();
    requests.put(address, handler);
    register(address);
    return connectedOnce.future();
  }

  /** Closes the connection for good (no reconnect). */
  @Override
  public Future<Void> close() {
    closed = true;
    return client == null ? Future.succeededFuture() : client.close();
  }

  /** How many connections this transport has made (a reconnect counts). */
  public long connections() {
    return connections;
  }

  /** Whether a connection is open now. */
  public boolean connected() {
    return socket != null;
  }

  private void start() {
    if (client != null) {
      return;
    }
    client = vertx.createNetClient(options);
    connect();
  }

  private void connect() {
    if (closed) {
      return;
    }
    Endpoint target = endpoints.get(endpoint % endpoints.size());
    client.connect(target.port(), target.host()).onComplete(connected -> {
      if (connected.failed()) {
        endpoint++;
        long delay = settings.connect().delayMs(++failedConnects, Math::random);
        LOG.log(failedConnects == 1 ? Level.INFO : Level.FINE, "control plane " + target + " not reached ("
            + connected.cause().getMessage() + "): next try in " + delay + " ms");
        vertx.setTimer(Math.max(1, delay), id -> connect());
        return;
      }
      opened(connected.result(), target);
    });
  }

  private void opened(NetSocket opened, Endpoint target) {
    if (closed) {
      opened.close();
      return;
    }
    if (!servedByMember(opened)) {
      LOG.warning("control plane " + target + " presented no member certificate of the cluster CA: not used");
      opened.close();
      endpoint++;
      vertx.setTimer(Math.max(1, settings.connect().delayMs(++failedConnects, Math::random)), id -> connect());
      return;
    }
    socket = opened;
    failedConnects = 0;
    connections++;
    long ping = vertx.setPeriodic(settings.pingMs(), id -> BridgeFrames.write(opened, new JsonObject().put("type", "ping")));
    opened.handler(BridgeFrames.reader(this::frame, problem -> {
      LOG.warning("control plane " + target + " sent " + problem + ": reconnecting");
      opened.close();
    }));
    opened.closeHandler(gone -> {
      vertx.cancelTimer(ping);
      lost(target);
    });
    messages.keySet().forEach(this::register);
    requests.keySet().forEach(this::register);
    if (connections > 1) {
      LOG.info("reconnected to control plane " + target);
    }
    connectedOnce.tryComplete();
  }

  /** The connection dropped: what was in flight fails as unavailable; a reconnect follows after a random delay. */
  /** Whether the server's certificate (verified against the CA by TLS) is a member's, not another agent's. */
  private static boolean servedByMember(NetSocket socket) {
    try {
      return PeerIdentity.of(socket.peerCertificates()).map(PeerIdentity::role).filter(PeerIdentity.MEMBER::equals)
          .isPresent();
    } catch (Exception e) {
      return false;
    }
  }

  private void lost(Endpoint target) {
    socket = null;
    List<Promise<JsonObject>> inFlight = new ArrayList<>(pending.values());
    pending.clear();
    inFlight.forEach(answer -> answer.tryFail(new ReplyException(ReplyFailure.NO_HANDLERS,
        "the connection to control plane " + target + " was lost")));
    if (closed) {
      return;
    }
    endpoint++;
    long delay = (long) (Math.random() * settings.spreadMs());
    LOG.log(Level.FINE, "connection to control plane " + target + " lost: reconnecting in " + delay + " ms");
    vertx.setTimer(Math.max(1, delay), id -> connect());
  }

  private void register(String address) {
    if (socket != null) {
      BridgeFrames.write(socket, new JsonObject().put("type", "register").put("address", address));
    }
  }

  private void frame(JsonObject frame) {
    String address = frame.getString("address");
    switch (String.valueOf(frame.getString("type"))) {
      case "message" -> message(address, frame);
      case "err" -> {
        Promise<JsonObject> answer = address == null ? null : pending.remove(address);
        if (answer != null) {
          answer.tryFail(failure(frame));
        } else {
          LOG.fine("control plane refused a frame: " + frame.getString("message"));
        }
      }
      default -> { } // pong
    }
  }

  private void message(String address, JsonObject frame) {
    Object body = frame.getValue("body");
    Promise<JsonObject> answer = pending.remove(address);
    if (answer != null) {
      if (body instanceof JsonObject json) {
        answer.tryComplete(json);
      } else {
        answer.tryFail(FailureCode.INTERNAL.refusal("the answer from " + address + " is no JSON object"));
      }
      return;
    }
    Consumer<JsonObject> handler = messages.get(address);
    Function<JsonObject, Future<JsonObject>> responder = requests.get(address);
    String replyAddress = frame.getString("replyAddress");
    Future<JsonObject> reply;
    try {
      if (!(body instanceof JsonObject json)) {
        throw new IllegalArgumentException("the body is no JSON object");
      }
      if (handler != null) {
        handler.accept(json);
        reply = Future.succeededFuture(new JsonObject());
      } else if (responder != null) {
        reply = responder.apply(json);
      } else {
        return;
      }
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    if (replyAddress == null) {
      reply.onFailure(e -> LOG.warning("message on " + address + " refused: " + e.getMessage()));
      return;
    }
    NetSocket from = socket;
    reply.onComplete(done -> {
      if (from == null || from != socket) {
        return; // the connection that asked is gone
      }
      JsonObject answerFrame = new JsonObject().put("type", "send").put("address", replyAddress);
      if (done.succeeded()) {
        answerFrame.put("body", done.result());
      } else {
        answerFrame.put("failureCode", done.cause() instanceof IllegalArgumentException ? 400
            : FailureCode.of(done.cause()).code()).put("message", String.valueOf(done.cause().getMessage()));
      }
      BridgeFrames.write(from, answerFrame);
    });
  }

  private static ReplyException failure(JsonObject frame) {
    ReplyFailure type;
    try {
      type = ReplyFailure.valueOf(frame.getString("failureType", "RECIPIENT_FAILURE"));
    } catch (IllegalArgumentException e) {
      type = ReplyFailure.RECIPIENT_FAILURE;
    }
    Integer code = frame.getValue("failureCode") instanceof Number number ? number.intValue() : 500;
    return new ReplyException(type, code, frame.getString("message"));
  }
}
