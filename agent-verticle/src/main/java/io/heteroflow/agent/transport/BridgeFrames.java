package io.heteroflow.agent.transport;

import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetSocket;
import io.vertx.core.parsetools.RecordParser;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * The framing of the Vert.x TCP event-bus bridge: each frame is a 4-byte big-endian length, then that many bytes of
 * one JSON object ({@code type}: send, register, ping from the client; message, err, pong from the bridge).
 */
final class BridgeFrames {
  /** A frame longer than this ends the connection (the longest real one is a log chunk of at most 1 MiB). */
  static final int MAX_FRAME = 16 << 20;

  private BridgeFrames() {}

  static void write(NetSocket socket, JsonObject frame) {
    byte[] json = frame.encode().getBytes(StandardCharsets.UTF_8);
    socket.write(Buffer.buffer(json.length + 4).appendInt(json.length).appendBytes(json));
  }

  /** A parser for {@code socket.handler}: each whole frame to {@code frames}; a bad one to {@code broken}. */
  static Handler<Buffer> reader(Consumer<JsonObject> frames, Consumer<String> broken) {
    RecordParser parser = RecordParser.newFixed(4);
    parser.handler(new Handler<>() {
      private boolean body;

      @Override
      public void handle(Buffer chunk) {
        if (!body) {
          int length = chunk.getInt(0);
          if (length < 2 || length > MAX_FRAME) {
            broken.accept("a frame of " + length + " bytes");
            return;
          }
          body = true;
          parser.fixedSizeMode(length);
          return;
        }
        body = false;
        parser.fixedSizeMode(4);
        JsonObject frame;
        try {
          frame = new JsonObject(chunk);
        } catch (RuntimeException e) {
          broken.accept("a frame that is no JSON object");
          return;
        }
        frames.accept(frame);
      }
    });
    return parser;
  }
}
