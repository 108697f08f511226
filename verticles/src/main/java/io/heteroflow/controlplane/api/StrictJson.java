package io.heteroflow.controlplane.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.jackson.JacksonCodec;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Strict reading of a JSON request body (SPEC §10): the body must be one JSON object, every top-level field
 * must be known, and every value must have the declared type; each refusal is a 400 naming the field.
 */
final class StrictJson {
  private final JsonObject body;

  private StrictJson(JsonObject body) {
    this.body = body;
  }

  static StrictJson parse(Buffer raw, Set<String> knownFields) {
    return parse(raw, knownFields::contains);
  }

  /** {@code known} decides which top-level fields are accepted (the others are refused by name). */
  static StrictJson parse(Buffer raw, Predicate<String> known) {
    if (raw == null || raw.length() == 0) {
      throw new ApiError(400, "invalid_body", null, "a JSON object body is required");
    }
    Object parsed = parseStrictly(raw);
    if (!(parsed instanceof JsonObject object)) {
      throw new ApiError(400, "invalid_body", null, "the body must be a JSON object");
    }
    for (String field : object.fieldNames()) {
      if (!known.test(field)) {
        throw ApiError.unknownField(printable(field));
      }
    }
    checkText("", object);
    return new StrictJson(object);
  }

  /**
   * Plain JSON only (RFC 8259): no comments, single quotes or other leniencies Vert.x's own parser allows, and a
   * key given twice in one object is a 400 naming it (which one would win is otherwise the parser's choice).
   */
  private static final JsonFactory STRICT = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
  private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '(.*)'");

  private static Object parseStrictly(Buffer raw) {
    try (JsonParser parser = STRICT.createParser(raw.getBytes())) {
      return JacksonCodec.fromParser(parser, Object.class);
    } catch (DecodeException | java.io.IOException e) {
      String message = firstLine(String.valueOf(e.getMessage()));
      java.util.regex.Matcher duplicate = DUPLICATE.matcher(message);
      if (duplicate.find()) {
        String field = printable(duplicate.group(1));
        throw new ApiError(400, "duplicate_key", field, "the key '" + field + "' is given twice in one object");
      }
      throw new ApiError(400, "malformed_json", null, "malformed JSON: " + message);
    }
  }

  /** A nested object read as strictly as a body (its text was checked with the body's): unknown fields refused. */
  static StrictJson of(JsonObject object, Predicate<String> known) {
    for (String field : object.fieldNames()) {
      if (!known.test(field)) {
        throw ApiError.unknownField(printable(field));
      }
    }
    return new StrictJson(object);
  }

  /** The top-level fields with a non-null value, in body order (values as JSON gives them). */
  Map<String, Object> presentFields() {
    Map<String, Object> present = new LinkedHashMap<>();
    for (String field : body.fieldNames()) {
      if (has(field)) {
        present.put(field, body.getValue(field));
      }
    }
    return present;
  }

  boolean has(String field) {
    return body.containsKey(field) && body.getValue(field) != null;
  }

  String string(String field, String fallback, int maxLength, Pattern pattern) {
    if (!has(field)) {
      return fallback;
    }
    if (!(body.getValue(field) instanceof String value)) {
      throw ApiError.badField(field, "must be a string");
    }
    return checkString(field, value, maxLength, pattern);
  }

  String requiredString(String field, int maxLength, Pattern pattern) {
    if (!has(field)) {
      throw ApiError.badField(field, "is required");
    }
    return string(field, null, maxLength, pattern);
  }

  long integer(String field, long fallback, long min, long max) {
    if (!has(field)) {
      return fallback;
    }
    Object value = body.getValue(field);
    if (!(value instanceof Integer || value instanceof Long)) {
      throw ApiError.badField(field, "must be an integer");
    }
    long number = ((Number) value).longValue();
    if (number < min || number > max) {
      throw ApiError.badField(field, "must be between " + min + " and " + max + " (was " + number + ")");
    }
    return number;
  }

  double number(String field, double fallback, double min, double max) {
    if (!has(field)) {
      return fallback;
    }
    if (!(body.getValue(field) instanceof Number value)) {
      throw ApiError.badField(field, "must be a number");
    }
    double number = value.doubleValue();
    if (Double.isNaN(number) || number < min || number > max) {
      throw ApiError.badField(field, "must be between " + min + " and " + max + " (was " + number + ")");
    }
    return number;
  }

  boolean bool(String field, boolean fallback) {
    if (!has(field)) {
      return fallback;
    }
    if (!(body.getValue(field) instanceof Boolean value)) {
      throw ApiError.badField(field, "must be true or false");
    }
    return value;
  }

  /** A nested object (null when absent), for its decoder to read field by field. */
  JsonObject object(String field) {
    if (!has(field)) {
      return null;
    }
    if (!(body.getValue(field) instanceof JsonObject object)) {
      throw ApiError.badField(field, "must be an object");
    }
    return object;
  }

  List<String> stringList(String field, int maxItems, int maxLength, boolean nonEmpty) {
    if (!has(field)) {
      return List.of();
    }
    if (!(body.getValue(field) instanceof JsonArray array)) {
      throw ApiError.badField(field, "must be an array of strings");
    }
    if (array.size() > maxItems) {
      throw ApiError.badField(field, "must have at most " + maxItems + " items");
    }
    if (nonEmpty && array.isEmpty()) {
      throw ApiError.badField(field, "must not be empty");
    }
    List<String> values = new ArrayList<>();
    for (int i = 0; i < array.size(); i++) {
      if (!(array.getValue(i) instanceof String value)) {
        throw ApiError.badField(field + "[" + i + "]", "must be a string");
      }
      values.add(checkString(field + "[" + i + "]", value, maxLength, null));
    }
    return values;
  }

  Map<String, String> stringMap(String field, int maxEntries, Pattern keyPattern, int maxValueLength) {
    if (!has(field)) {
      return Map.of();
    }
    if (!(body.getValue(field) instanceof JsonObject object)) {
      throw ApiError.badField(field, "must be an object of string values");
    }
    if (object.size() > maxEntries) {
      throw ApiError.badField(field, "must have at most " + maxEntries + " entries");
    }
    Map<String, String> values = new LinkedHashMap<>();
    for (String key : object.fieldNames()) {
      String path = field + "." + key;
      if (!keyPattern.matcher(key).matches()) {
        throw ApiError.badField(path, "is not a valid key (" + keyPattern.pattern() + ")");
      }
      if (!(object.getValue(key) instanceof String value)) {
        throw ApiError.badField(path, "must be a string");
      }
      values.put(key, checkString(path, value, maxValueLength, null));
    }
    return values;
  }

  private static String checkString(String field, String value, int maxLength, Pattern pattern) {
    if (value.length() > maxLength) {
      throw ApiError.badField(field, "must be at most " + maxLength + " characters");
    }
    if (value.indexOf('\0') >= 0) {
      throw ApiError.badField(field, "must not contain NUL characters");
    }
    if (pattern != null && !pattern.matcher(value).matches()) {
      throw ApiError.badField(field, "must match " + pattern.pattern());
    }
    return value;
  }

  /**
   * Every string of the body, keys included, at any depth, must be text PostgreSQL can store: no NUL and no
   * lone UTF-16 surrogate (JSON lets {@code "\\ud800"} through; it would be written as '?'). A refusal names
   * the JSON path ({@code env.KEY}, {@code command[1]}).
   */
  private static void checkText(String path, Object value) {
    if (value instanceof JsonObject object) {
      for (Map.Entry<String, Object> entry : object) {
        String child = path.isEmpty() ? printable(entry.getKey()) : path + "." + printable(entry.getKey());
        String problem = textProblem(entry.getKey());
        if (problem != null) {
          throw ApiError.badField(child, "key " + problem);
        }
        checkText(child, entry.getValue());
      }
    } else if (value instanceof JsonArray array) {
      for (int i = 0; i < array.size(); i++) {
        checkText(path + "[" + i + "]", array.getValue(i));
      }
    } else if (value instanceof String text) {
      String problem = textProblem(text);
      if (problem != null) {
        throw ApiError.badField(path, problem);
      }
    }
  }

  /** Why {@code text} cannot be stored, or null. */
  private static String textProblem(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\0') {
        return "must not contain NUL characters";
      }
      if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return String.format("must not contain a lone UTF-16 surrogate (\\u%04x at index %d)", (int) c, i);
      }
    }
    return null;
  }

  /** {@code text} with NUL, other control characters and surrogates written as {@code \\uXXXX} (for messages). */
  static String printable(String text) {
    StringBuilder out = new StringBuilder(text.length());
    text.chars().forEach(c -> {
      if (c < 0x20 || c == 0x7f || Character.isSurrogate((char) c)) {
        out.append(String.format("\\u%04x", c));
      } else {
        out.append((char) c);
      }
    });
    return out.toString();
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
