package io.heteroflow.protocol.message;

import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one place an event-bus consumer reads its payload: a JSON object whose fields are read by type, each
 * read refusing a missing, null or wrongly typed field with a 400 naming it; and {@link #answer}, which runs a
 * handler so that every request is answered, with a reply or a failure code (docs/event-bus.md), never an
 * exception thrown into the event loop or a silence until the sender's timeout.
 */
public final class BusPayload {
  private static final Logger LOG = Logger.getLogger(BusPayload.class.getName());
  private final JsonObject body;
  private final String path;

  private BusPayload(JsonObject body, String path) {
    this.body = body;
    this.path = path;
  }

  /** The payload of a message body: a JSON object, or a 400 failure. */
  public static BusPayload of(Object body) {
    if (body instanceof JsonObject json) {
      return new BusPayload(json, "");
    }
    throw FailureCode.BAD_REQUEST.refusal("body: a JSON object is required, got "
        + (body == null ? "nothing" : body.getClass().getSimpleName()));
  }

  /**
   * Answers {@code message} with what {@code handler} makes of its typed payload ({@code reader}, the message
   * record's {@code fromJson}): the reply's JSON, or a failure. This is the receiving side's one mapping of
   * failures to {@link FailureCode}s: a {@link FailureCode#refusal} (thrown or failed) keeps its code, an
   * {@link IllegalArgumentException} is {@link FailureCode#BAD_REQUEST}, any other failed future
   * {@link FailureCode#UNAVAILABLE} and any other exception thrown {@link FailureCode#INTERNAL}. A message without
   * a reply address gets no answer (nobody waits for it) and is only logged when it is refused.
   */
  public static <T> void answer(Message<?> message, Function<JsonObject, T> reader,
                                Function<T, Future<? extends BusMessage>> handler) {
    Future<? extends BusMessage> reply;
    try {
      reply = handler.apply(reader.apply(of(message.body()).json()));
    } catch (RuntimeException e) {
      fail(message, e, FailureCode.INTERNAL);
      return;
    }
    reply.onComplete(done -> {
      if (done.failed()) {
        fail(message, done.cause(), FailureCode.UNAVAILABLE);
      } else if (message.replyAddress() != null) {
        message.reply(done.result() == null ? null : done.result().toJson());
      }
    });
  }

  private static void fail(Message<?> message, Throwable e, FailureCode otherwise) {
    FailureCode code = e instanceof ReplyException reply && reply.failureType() == ReplyFailure.RECIPIENT_FAILURE
        ? FailureCode.forCode(reply.failureCode())
        : e instanceof IllegalArgumentException ? FailureCode.BAD_REQUEST
        : otherwise;
    if (code.retryable()) {
      LOG.log(Level.WARNING, message.address() + " failed", e);
    } else if (message.replyAddress() == null) {
      LOG.warning(message.address() + ": a message was refused: " + e.getMessage());
    }
    if (message.replyAddress() != null) {
      message.fail(code.code(), code.retryable() ? message.address() + " failed: " + e.getMessage() : e.getMessage());
    }
  }

  public JsonObject json() {
    return body;
  }

  public boolean has(String field) {
    return body.getValue(field) != null;
  }

  public String requiredString(String field) {
    return required(field, optionalString(field));
  }

  /** A string without NUL characters (PostgreSQL text cannot hold one; a NUL is refused here, not at the insert). */
  public String optionalString(String field) {
    String value = typed(field, String.class, "a string");
    if (value != null && value.indexOf('\0') >= 0) {
      throw bad(field, "must not contain NUL characters");
    }
    return value;
  }

  /**
   * Free text the sender does not control (a process's output): a NUL becomes U+FFFD, so the message that
   * carries it is still stored, not refused for ever.
   */
  public String optionalText(String field) {
    String value = typed(field, String.class, "a string");
    return value == null ? null : value.replace('\0', '\uFFFD');
  }

  /** A required task id. */
  public UUID uuid(String field) {
    String value = requiredString(field);
    try {
      return UUID.fromString(value);
    } catch (IllegalArgumentException e) {
      throw bad(field, "not an id: " + value);
    }
  }

  public Integer optionalInteger(String field) {
    Long value = optionalLong(field);
    if (value != null && value != value.intValue()) {
      throw bad(field, "an integer of 32 bits is required");
    }
    return value == null ? null : value.intValue();
  }

  public int requiredInteger(String field) {
    return required(field, optionalInteger(field));
  }

  public Long optionalLong(String field) {
    Number value = typed(field, Number.class, "an integer");
    if (value != null && value.doubleValue() != Math.rint(value.doubleValue())) {
      throw bad(field, "an integer is required");
    }
    if (value != null && !fitsInLong(value)) {
      throw bad(field, "an integer of at most 64 bits is required, got " + value);
    }
    return value == null ? null : value.longValue();
  }

  /** Whether {@code value} is a long as it stands: a BigInteger or double beyond 64 bits would wrap. */
  private static boolean fitsInLong(Number value) {
    if (value instanceof java.math.BigInteger big) {
      return big.bitLength() <= 63;
    }
    if (value instanceof java.math.BigDecimal decimal) {
      return decimal.toBigInteger().bitLength() <= 63;
    }
    if (value instanceof Double || value instanceof Float) {
      return Math.abs(value.doubleValue()) < 0x1p63;
    }
    return true;
  }

  public long requiredLong(String field) {
    return required(field, optionalLong(field));
  }

  /** A number of magnitude below 2^63: no reading HeteroFlow takes is larger, and beyond it a long would wrap. */
  public Double optionalNumber(String field) {
    Number value = typed(field, Number.class, "a number");
    if (value != null && !(Math.abs(value.doubleValue()) < 0x1p63)) {
      throw bad(field, "a number below 2^63 in magnitude is required, got " + value);
    }
    return value == null ? null : value.doubleValue();
  }

  public boolean bool(String field, boolean otherwise) {
    Boolean value = typed(field, Boolean.class, "true or false");
    return value == null ? otherwise : value;
  }

  public BusPayload requiredObject(String field) {
    return required(field, optionalObject(field));
  }

  public BusPayload optionalObject(String field) {
    JsonObject value = typed(field, JsonObject.class, "a JSON object");
    return value == null ? null : new BusPayload(value, path + field + ".");
  }

  public JsonArray optionalArray(String field) {
    return typed(field, JsonArray.class, "a JSON array");
  }

  /** An array of objects (absent: empty), each read with its place in the field names of its refusals. */
  public List<BusPayload> objects(String field) {
    JsonArray array = optionalArray(field);
    List<BusPayload> objects = new ArrayList<>();
    for (int i = 0; array != null && i < array.size(); i++) {
      if (!(array.getValue(i) instanceof JsonObject each)) {
        throw bad(field + "[" + i + "]", "a JSON object is required");
      }
      objects.add(new BusPayload(each, path + field + "[" + i + "]."));
    }
    return objects;
  }

  /** An array of integers (absent: empty). */
  public List<Integer> integers(String field) {
    List<Integer> integers = new ArrayList<>();
    List<Number> numbers = elements(field, Number.class, "an integer");
    for (int i = 0; i < numbers.size(); i++) {
      Number value = numbers.get(i);
      if (value.doubleValue() != value.intValue()) {
        throw bad(field + "[" + i + "]", "an integer is required");
      }
      integers.add(value.intValue());
    }
    return integers;
  }

  /** An array of task ids (absent: empty). */
  public List<UUID> uuids(String field) {
    List<String> strings = strings(field);
    List<UUID> ids = new ArrayList<>();
    for (int i = 0; i < strings.size(); i++) {
      try {
        ids.add(UUID.fromString(strings.get(i)));
      } catch (IllegalArgumentException e) {
        throw bad(field + "[" + i + "]", "not an id: " + strings.get(i));
      }
    }
    return ids;
  }

  /** An object whose values are all strings (absent: empty). */
  public Map<String, String> stringMap(String field) {
    BusPayload object = optionalObject(field);
    Map<String, String> map = new LinkedHashMap<>();
    if (object != null) {
      object.json().fieldNames().forEach(name -> map.put(name, object.requiredString(name)));
    }
    return map;
  }

  /** An array of strings (absent: empty). */
  public List<String> strings(String field) {
    return elements(field, String.class, "a string");
  }

  private <T> List<T> elements(String field, Class<T> type, String what) {
    JsonArray array = optionalArray(field);
    List<T> elements = new ArrayList<>();
    for (int i = 0; array != null && i < array.size(); i++) {
      if (!type.isInstance(array.getValue(i))) {
        throw bad(field + "[" + i + "]", what + " is required");
      }
      elements.add(type.cast(array.getValue(i)));
    }
    return elements;
  }

  /** A 400 refusal naming {@code field} (with this payload's place in the message). */
  public ReplyException bad(String field, String why) {
    return FailureCode.BAD_REQUEST.refusal(path + field + ": " + why);
  }

  private <T> T required(String field, T value) {
    if (value == null) {
      throw bad(field, "required");
    }
    return value;
  }

  private <T> T typed(String field, Class<T> type, String what) {
    Object value = body.getValue(field);
    if (value == null || type.isInstance(value)) {
      return type.cast(value);
    }
    throw bad(field, what + " is required, got " + value.getClass().getSimpleName());
  }
}
