package io.heteroflow.controlplane.fuzz;

import io.heteroflow.controlplane.fuzz.ApiCase.Expect;
import io.heteroflow.controlplane.fuzz.HostileValues.RawBody;
import io.heteroflow.controlplane.fuzz.HostileValues.Value;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Generates the REST fuzz cases from the routes the running API registers (so a new route is fuzzed too). */
final class ApiCases {
  private static final Pattern PARAM = Pattern.compile("\\{([A-Za-z]+)}");
  private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH");
  private final String admin;
  private final Function<String, String> fixtureOf;
  private final List<ApiCase> cases = new ArrayList<>();

  /** {@code fixtureOf}: the value of a path parameter for a route ("/api/v1/tasks/{id}" → a task's id). */
  private ApiCases(String admin, Function<String, String> fixtureOf) {
    this.admin = admin;
    this.fixtureOf = fixtureOf;
  }

  static List<ApiCase> generate(List<String> routes, String admin, Function<String, String> fixtureOf) {
    ApiCases generator = new ApiCases(admin, fixtureOf);
    Set<String> paths = new LinkedHashSet<>();
    for (String route : routes) {
      String[] methodAndPath = route.split(" ", 2);
      paths.add(methodAndPath[1]);
      generator.route(route, methodAndPath[0], methodAndPath[1]);
    }
    for (String path : paths) {
      for (String method : METHODS) {
        if (!routes.contains(method + " " + path)) {
          generator.add(method + " " + path, "a method it does not take", method, generator.concrete(path),
              "application/json", "{}".getBytes(StandardCharsets.UTF_8), admin, Expect.REFUSED, null);
        }
      }
    }
    return generator.cases;
  }

  private void route(String route, String method, String path) {
    String concrete = concrete(path);
    JsonObject sample = ApiSamples.BODIES.get(route);
    byte[] body = sample == null ? null : bytes(sample);
    if (path.startsWith("/api/v1/") && !path.equals("/api/v1/openapi.yaml")) {
      add(route, "no token", method, concrete, "application/json", body, null, Expect.REFUSED, null);
      add(route, "a wrong token", method, concrete, "application/json", body, "not-a-token", Expect.REFUSED, null);
      add(route, "a 10,000-character token", method, concrete, "application/json", body, "t".repeat(10_000),
          Expect.REFUSED, null);
    }
    Matcher param = PARAM.matcher(path);
    while (param.find()) {
      for (Value segment : HostileValues.SEGMENTS) {
        String hostile = path.substring(0, param.start()) + segment.json() + path.substring(param.end());
        add(route, param.group(1) + ": " + segment.why(), method, concrete(hostile), "application/json", body,
            admin, Expect.REFUSED, null);
      }
    }
    if (sample != null) {
      bodies(route, method, concrete, sample);
    }
  }

  private void bodies(String route, String method, String path, JsonObject sample) {
    String first = sample.fieldNames().iterator().next();
    for (RawBody raw : HostileValues.BODIES) {
      String text = new String(raw.bytes(), StandardCharsets.ISO_8859_1).replace("\"a\"", "\"" + first + "\"");
      add(route, raw.why(), method, path, "application/json", text.getBytes(StandardCharsets.ISO_8859_1), admin,
          Expect.REFUSED, null);
    }
    for (String type : HostileValues.WRONG_CONTENT_TYPES) {
      add(route, "Content-Type " + type, method, path, type, bytes(sample), admin, Expect.REFUSED, null);
    }
    if (!ApiSamples.FREE_KEYS.contains(route)) {
      add(route, "an unknown field", method, path, "application/json",
          bytes(sample.copy().put("zz_unknown", 1)), admin, Expect.NAMED, "zz_unknown");
    }
    String duplicated = sample.encode().replaceFirst("^\\{", "{\"" + first + "\":" + Json.encode(sample.getValue(first)) + ",");
    add(route, "the key " + first + " twice", method, path, "application/json",
        duplicated.getBytes(StandardCharsets.UTF_8), admin, Expect.NAMED, first);
    mutate(route, method, path, sample, sample, "");
  }

  /** Every field of {@code object} (a part of {@code root}) replaced by every hostile value, one at a time. */
  private void mutate(String route, String method, String path, JsonObject root, JsonObject object, String prefix) {
    for (String field : List.copyOf(object.fieldNames())) {
      Object original = object.getValue(field);
      for (Value value : HostileValues.VALUES) {
        object.put(field, value.json());
        add(route, prefix + field + " = " + value.why(), method, path, "application/json", bytes(root), admin,
            expectation(original, value), field);
      }
      if (original instanceof JsonArray array && !array.isEmpty()) {
        for (Value value : HostileValues.VALUES) {
          JsonArray changed = array.copy();
          changed.set(0, value.json());
          object.put(field, changed);
          add(route, prefix + field + "[0] = " + value.why(), method, path, "application/json", bytes(root), admin,
              expectation(array.getValue(0), value), field);
        }
      }
      object.put(field, original);
      if (original instanceof JsonObject nested) {
        mutate(route, method, path, root, nested, prefix + field + ".");
      }
    }
  }

  /** A value of another JSON type, or an integer beyond 64 bits for a number, must be refused naming the field. */
  private static Expect expectation(Object original, Value value) {
    if (value.json() == null) {
      return Expect.ANSWERED;
    }
    if (original instanceof Number && value.beyond64Bits()) {
      return Expect.NAMED;
    }
    return Json.type(original).equals(Json.type(value.json())) ? Expect.ANSWERED : Expect.NAMED;
  }

  private String concrete(String path) {
    Matcher param = PARAM.matcher(path);
    StringBuilder out = new StringBuilder();
    while (param.find()) {
      param.appendReplacement(out, Matcher.quoteReplacement(fixtureOf.apply(path.substring(0, param.start()))));
    }
    return param.appendTail(out).toString();
  }

  private void add(String route, String why, String method, String path, String contentType, byte[] body,
                   String token, Expect expect, String field) {
    boolean carriesBody = body != null && !method.equals("GET") && !method.equals("DELETE");
    cases.add(new ApiCase(route, why, method, path, carriesBody ? contentType : null, carriesBody ? body : null,
        token, expect, field));
  }

  private static byte[] bytes(JsonObject json) {
    return json.encode().getBytes(StandardCharsets.UTF_8);
  }

  /** JSON types as a client sees them. */
  static final class Json {
    static String type(Object value) {
      return value == null ? "null" : value instanceof Number ? "number" : value instanceof Boolean ? "boolean"
          : value instanceof String ? "string" : value instanceof JsonObject || value instanceof Map ? "object"
          : "array";
    }

    static String encode(Object value) {
      return new JsonArray().add(value).encode().replaceAll("^\\[|]$", "");
    }
  }
}
