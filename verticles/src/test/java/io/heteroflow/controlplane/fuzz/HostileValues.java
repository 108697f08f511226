package io.heteroflow.controlplane.fuzz;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigInteger;
import java.util.List;

/**
 * Hostile inputs the fuzz suites send: JSON values of every type and extreme, strings that attack paths, SQL,
 * formats and terminals, raw bodies that are not one well-formed UTF-8 JSON object, and path segments.
 */
final class HostileValues {
  private HostileValues() {}

  /** A JSON value as the body will carry it, and whether it is a string. */
  record Value(String why, Object json) {
    boolean isString() {
      return json instanceof String;
    }

    boolean isNumber() {
      return json instanceof Number;
    }

    /** An integer no 64-bit field can hold: an API must refuse it, never wrap it. */
    boolean beyond64Bits() {
      return json instanceof BigInteger;
    }
  }

  /** Under the 64 KiB body limit, so the field itself is judged. */
  static final String HUGE = "x".repeat(60_000);

  /** Values of the wrong type for almost any field, and extremes of each type. */
  static final List<Value> VALUES = List.of(
      new Value("null", null),
      new Value("true", true),
      new Value("zero", 0),
      new Value("minus one", -1),
      new Value("2^31", 2_147_483_648L),
      new Value("Long.MIN_VALUE", Long.MIN_VALUE),
      new Value("2^63 (wraps to a negative long)", new BigInteger("9223372036854775808")),
      new Value("2^64 + 1", new BigInteger("18446744073709551617")),
      new Value("1e308", 1e308),
      new Value("a fraction", 0.5),
      new Value("an empty object", new JsonObject()),
      new Value("an array of nulls", new JsonArray().addNull().addNull()),
      new Value("an empty string", ""),
      new Value("60,000 characters", HUGE),
      new Value("path traversal", "../../../../etc/passwd"),
      new Value("SQL injection", "x'; DROP TABLE tasks; --"),
      new Value("format string", "%s%s%s%n%x"),
      new Value("a NUL character", "a\u0000b"),
      new Value("terminal escapes", "\u001b[2J\u001b]0;pwned\u0007"),
      new Value("a number as a string", "7"));

  /** Bodies that are not one strict JSON object, as raw bytes. */
  static final List<RawBody> BODIES = List.of(
      RawBody.text("an empty body", ""),
      RawBody.text("a JSON array", "[]"),
      RawBody.text("a JSON string", "\"text\""),
      RawBody.text("a JSON number", "42"),
      RawBody.text("JSON null", "null"),
      RawBody.text("an unterminated object", "{\"name\":"),
      RawBody.text("single quotes", "{'name':'x'}"),
      RawBody.text("a comment", "{/* hi */}"),
      RawBody.text("a trailing comma", "{\"a\":1,}"),
      RawBody.text("NaN", "{\"a\":NaN}"),
      RawBody.text("two objects", "{}{}"),
      RawBody.text("100,000 nested arrays", "{\"a\":" + "[".repeat(100_000) + "]".repeat(100_000) + "}"),
      RawBody.text("a body over the 64 KiB limit", "{\"a\":\"" + "y".repeat(70_000) + "\"}"),
      RawBody.text("a lone surrogate escape", "{\"a\":\"\\ud800\"}"),
      RawBody.bytes("invalid UTF-8", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xff, (byte) 0xfe, '"', '}'}),
      RawBody.bytes("overlong UTF-8 for '/'", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xc0, (byte) 0xaf, '"', '}'}),
      RawBody.bytes("a UTF-8 encoded surrogate", new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xed, (byte) 0xa0,
          (byte) 0x80, '"', '}'}));

  record RawBody(String why, byte[] bytes) {
    static RawBody text(String why, String text) {
      return new RawBody(why, text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    static RawBody bytes(String why, byte[] bytes) {
      return new RawBody(why, bytes);
    }
  }

  /** Path segments, already percent-encoded as a client would send them. */
  static final List<Value> SEGMENTS = List.of(
      new Value("encoded traversal", "..%2F..%2F..%2Fetc%2Fpasswd"),
      new Value("dot-dot", "%2E%2E"),
      new Value("SQL injection", "x%27%20OR%20%271%27%3D%271"),
      new Value("5,000 characters", "a".repeat(5_000)),
      new Value("an invalid UTF-8 escape", "%FF%FE"),
      new Value("an overlong UTF-8 escape", "%C0%AF"),
      new Value("a NUL escape", "a%00"),
      new Value("a UUID-like id that does not exist", "00000000-0000-0000-0000-000000000000"),
      new Value("a unicode name", "%E2%80%AEevil"));

  /** Content types a JSON body must not be accepted under ({@code null}: no Content-Type header). */
  static final List<String> WRONG_CONTENT_TYPES = java.util.Arrays.asList("text/plain", "application/xml",
      "application/x-www-form-urlencoded", null);
}
