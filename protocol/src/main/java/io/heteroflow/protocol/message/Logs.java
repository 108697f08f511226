package io.heteroflow.protocol.message;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;

/**
 * control plane → agent, request-reply: one byte range of a task's log: at most {@code maxBytes} (never more than
 * {@link #MAX_CHUNK_BYTES}) from {@code offset} (a byte position since the task's first byte), or from
 * {@code tailBytes} before the end when that is set; a request with neither (from before ranges) gets the last
 * {@code maxBytes}.
 */
public record Logs(UUID taskId, Long offset, int maxBytes, Long tailBytes) implements BusMessage {
  /** The most one answer carries: a log is streamed as a sequence of such ranges. */
  public static final int MAX_CHUNK_BYTES = 256 * 1024;
  /** What a request that names no limit gets. */
  public static final int DEFAULT_MAX_BYTES = MAX_CHUNK_BYTES;

  /** The first range of the log (an older caller's request: up to {@code maxBytes}). */
  public Logs(UUID taskId, int maxBytes) {
    this(taskId, null, maxBytes, null);
  }

  @Override
  public JsonObject toJson() {
    return BusMessage.envelope().put("task_id", taskId.toString()).put("offset", offset).put("max_bytes", maxBytes)
        .put("tail_bytes", tailBytes);
  }

  public static Logs fromJson(JsonObject json) {
    BusPayload request = BusMessage.versioned(json);
    UUID taskId = request.uuid("task_id");
    Integer maxBytes = request.optionalInteger("max_bytes");
    if (maxBytes != null && maxBytes < 0) {
      throw request.bad("max_bytes", "0 or more is required");
    }
    Long offset = request.optionalLong("offset");
    if (offset != null && offset < 0) {
      throw request.bad("offset", "0 or more is required");
    }
    Long tailBytes = request.optionalLong("tail_bytes");
    if (tailBytes != null && tailBytes < 0) {
      throw request.bad("tail_bytes", "0 or more is required");
    }
    int limit = maxBytes == null ? DEFAULT_MAX_BYTES : Math.min(maxBytes, MAX_CHUNK_BYTES);
    if (offset == null && tailBytes == null) { // a control plane from before ranges asked for the log's tail
      tailBytes = (long) limit;
    }
    return new Logs(taskId, offset, limit, tailBytes);
  }

  /**
   * The answer: the range's bytes ({@code data}, base64) starting at {@code offset}; {@code end} is where the log
   * ended when read, {@code droppedBytes} how many of its first bytes are gone (the cap keeps the newest
   * {@code capBytes}); {@code found} is false when the agent has no log of the task. The plain {@code text}
   * (UTF-8) is also sent, for readers from before ranges.
   */
  public record Answer(UUID taskId, boolean found, long offset, byte[] data, long end, long droppedBytes, long capBytes)
      implements BusMessage {
    /** Where the next range starts. */
    public long next() {
      return offset + data.length;
    }

    public String text() {
      return new String(data, StandardCharsets.UTF_8);
    }

    @Override
    public JsonObject toJson() {
      return BusMessage.envelope().put("task_id", taskId.toString()).put("found", found).put("offset", offset)
          .put("data", Base64.getEncoder().encodeToString(data)).put("text", text()).put("end", end)
          .put("dropped_bytes", droppedBytes).put("cap_bytes", capBytes);
    }

    /** An answer of an agent from before ranges carries only {@code text}: the whole range from 0. */
    public static Answer fromJson(JsonObject json) {
      BusPayload answer = BusMessage.versioned(json);
      String data = answer.optionalString("data");
      String text = answer.optionalText("text");
      byte[] bytes = data != null ? Base64.getDecoder().decode(data)
          : (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
      Long offset = answer.optionalLong("offset");
      Long end = answer.optionalLong("end");
      Long dropped = answer.optionalLong("dropped_bytes");
      Long cap = answer.optionalLong("cap_bytes");
      Boolean found = json.getValue("found") instanceof Boolean given ? given : Boolean.TRUE;
      long from = offset == null ? 0 : offset;
      return new Answer(answer.uuid("task_id"), found, from, bytes, end == null ? from + bytes.length : end,
          dropped == null ? 0 : dropped, cap == null ? 0 : cap);
    }
  }
}
