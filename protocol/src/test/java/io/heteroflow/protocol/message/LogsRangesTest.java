package io.heteroflow.protocol.message;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Logs as byte ranges, and what messages from before ranges mean: a tail request, a text answer from offset 0. */
class LogsRangesTest {
  private static final UUID TASK = UUID.fromString("5e0d7c1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a");

  @Test
  void aRequestFromBeforeRangesAsksForTheTailAndNoRequestGetsMoreThanOneChunk() {
    Logs old = Logs.fromJson(new JsonObject().put("v", 1).put("task_id", TASK.toString()).put("max_bytes", 1 << 20));
    assertEquals(Logs.MAX_CHUNK_BYTES, old.maxBytes());
    assertEquals((long) Logs.MAX_CHUNK_BYTES, old.tailBytes());
    assertNull(old.offset());
    Logs ranged = Logs.fromJson(new Logs(TASK, 7L, 100, null).toJson());
    assertEquals(7L, ranged.offset());
    assertNull(ranged.tailBytes());
    io.vertx.core.eventbus.ReplyException bad = assertThrows(io.vertx.core.eventbus.ReplyException.class,
        () -> Logs.fromJson(new JsonObject().put("v", 1).put("task_id", TASK.toString()).put("tail_bytes", -1)));
    assertTrue(bad.getMessage().contains("tail_bytes"), bad.getMessage());
  }

  @Test
  void anAnswerFromBeforeRangesIsItsTextFromOffsetZero() {
    Logs.Answer old = Logs.Answer.fromJson(new JsonObject().put("v", 1).put("task_id", TASK.toString())
        .put("text", "époque\n"));
    assertArrayEquals("époque\n".getBytes(StandardCharsets.UTF_8), old.data());
    assertEquals(0, old.offset());
    assertEquals(old.data().length, old.end());
    assertTrue(old.found());
    byte[] binary = {(byte) 0xc3, 0x00, (byte) 0xff};
    Logs.Answer ranged = Logs.Answer.fromJson(new Logs.Answer(TASK, true, 10, binary, 13, 10, 64).toJson());
    assertArrayEquals(binary, ranged.data(), "bytes survive even when cut inside a UTF-8 character");
    assertEquals(13, ranged.next());
  }
}
