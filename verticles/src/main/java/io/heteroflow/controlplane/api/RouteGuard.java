package io.heteroflow.controlplane.api;

import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks a request against the routes of one router before any of them runs, for every route, also the ones
 * registered later: the method (405 with {@code Allow}, OPTIONS answered 204 with {@code Allow}), the path
 * parameters (percent-decoded; no NUL, valid UTF-8) and the query parameters (only those a route declares with
 * {@code route.putMetadata(RouteGuard.QUERY, List.of(…))}, none otherwise; no NUL). Refusals are JSON
 * {@link ApiError}s naming the parameter.
 */
final class RouteGuard {
  /** Route metadata key: the query parameter names the route accepts (a collection of strings). */
  static final String QUERY = "heteroflow.query";
  private static final List<HttpMethod> ORDER = List.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST,
      HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE, HttpMethod.OPTIONS);

  private RouteGuard() {}

  /** For the {@code /api/v1} sub-router: a path no route has is a 404 (JSON); parameters are checked. */
  static Handler<RoutingContext> api(Router router) {
    return ctx -> guard(ctx, router, true);
  }

  /** For the top-level router: only the methods of its own paths; any other path goes on (static files). */
  static Handler<RoutingContext> methods(Router router) {
    return ctx -> guard(ctx, router, false);
  }

  private static void guard(RoutingContext ctx, Router router, boolean api) {
    String path = relativePath(ctx);
    if (path == null) {
      ctx.next();
      return;
    }
    if (!api && !validEscapes(path)) {
      // Vert.x's route matching throws on it (also when routing a failure): answer here, route nothing
      Http.sendError(ctx, new ApiError(400, "invalid_path", null, "the path is not valid percent-encoding"));
      return;
    }
    if (!api && hasDotSegment(path)) {
      // Vert.x would route the path with the dot segments removed: another route than the one the client named
      Http.sendError(ctx, new ApiError(400, "invalid_path", null, "the path must not contain '.' or '..' segments"));
      return;
    }
    String[] segments = segments(path);
    Set<HttpMethod> allowed = new HashSet<>();
    Route chosen = null;
    Map<String, String> params = null;
    for (Route route : router.getRoutes()) {
      Map<String, String> matched = match(route, segments);
      if (matched == null) {
        continue;
      }
      allowed.addAll(route.methods());
      if (chosen == null && route.methods().contains(ctx.request().method())) {
        chosen = route;
        params = matched;
      }
    }
    if (allowed.isEmpty()) {
      if (api) {
        ctx.fail(new ApiError(404, "not_found", null, "no such route: " + ctx.request().method() + " "
            + ctx.request().path()));
      } else {
        ctx.next();
      }
      return;
    }
    if (chosen == null) {
      String allow = allow(allowed);
      ctx.response().putHeader("Allow", allow);
      if (ctx.request().method() == HttpMethod.OPTIONS) {
        ctx.response().setStatusCode(204).end();
      } else {
        ctx.fail(new ApiError(405, "method_not_allowed", null, ctx.request().method() + " is not allowed on "
            + ctx.request().path() + "; allowed: " + allow));
      }
      return;
    }
    if (api) {
      checkPathParams(params);
      checkQuery(ctx, chosen);
    }
    ctx.next();
  }

  private static void checkPathParams(Map<String, String> params) {
    params.forEach((name, raw) -> {
      String value = decode(raw).orElseThrow(() ->
          ApiError.badField(name, "is not a valid percent-encoded UTF-8 path segment"));
      if (value.indexOf('\0') >= 0) {
        throw ApiError.badField(name, "must not contain NUL characters");
      }
    });
  }

  private static void checkQuery(RoutingContext ctx, Route route) {
    Collection<String> known = route.getMetadata(QUERY);
    Set<String> accepted = known == null ? Set.of() : Set.copyOf(known);
    MultiMap query;
    try {
      query = ctx.queryParams();
    } catch (RuntimeException malformed) { // Vert.x wraps netty's IllegalArgumentException in an HttpException
      throw new ApiError(400, "invalid_query", null, "the query string is not valid percent-encoding");
    }
    for (String name : query.names()) {
      if (!accepted.contains(name)) {
        throw new ApiError(400, "unknown_query_parameter", StrictJson.printable(name), "unknown query parameter '"
            + StrictJson.printable(name) + "'" + (accepted.isEmpty() ? "; this route takes none"
            : "; this route takes " + String.join(", ", new TreeSet<>(accepted))));
      }
      for (String value : query.getAll(name)) {
        if (value.indexOf('\0') >= 0) {
          throw ApiError.badField(name, "must not contain NUL characters");
        }
      }
    }
  }

  /** The path below the router's mount point, undecoded; null when it cannot be told. */
  private static String relativePath(RoutingContext ctx) {
    String path = ctx.request().path();
    String mount = ctx.mountPoint();
    if (path == null) {
      return null;
    }
    if (mount == null || mount.equals("/")) {
      return path;
    }
    String prefix = mount.endsWith("/") ? mount.substring(0, mount.length() - 1) : mount;
    return path.startsWith(prefix) ? path.substring(prefix.length()) : null;
  }

  private static String[] segments(String path) {
    String trimmed = path.startsWith("/") ? path.substring(1) : path;
    if (trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    return trimmed.isEmpty() ? new String[0] : trimmed.split("/", -1);
  }

  /** The raw path parameters when {@code route} (a plain path with {@code :name} segments) matches. */
  private static Map<String, String> match(Route route, String[] segments) {
    String pattern = route.getPath();
    if (pattern == null || pattern.endsWith("*") || route.methods() == null || route.methods().isEmpty()
        || route.getSubRouter() != null) {
      return null;
    }
    String[] parts = segments(pattern);
    if (parts.length != segments.length) {
      return null;
    }
    Map<String, String> params = new LinkedHashMap<>();
    for (int i = 0; i < parts.length; i++) {
      if (parts[i].startsWith(":")) {
        if (segments[i].isEmpty()) {
          return null;
        }
        params.put(parts[i].substring(1), segments[i]);
      } else if (!parts[i].equals(segments[i])) {
        return null;
      }
    }
    return params;
  }

  private static String allow(Set<HttpMethod> methods) {
    Set<String> all = new TreeSet<>();
    methods.forEach(method -> all.add(method.name()));
    all.add(HttpMethod.OPTIONS.name());
    List<String> known = ORDER.stream().map(HttpMethod::name).filter(all::contains).toList();
    all.removeAll(known);
    return Stream.concat(known.stream(), all.stream()).collect(Collectors.joining(", "));
  }

  /** A segment that is "." or "..", also percent-encoded ({@code %2E%2E}). */
  private static boolean hasDotSegment(String raw) {
    for (String segment : raw.split("/", -1)) {
      String decoded = segment.replace("%2E", ".").replace("%2e", ".");
      if (decoded.equals(".") || decoded.equals("..")) {
        return true;
      }
    }
    return false;
  }

  /** Every {@code %} is followed by two hex digits. */
  private static boolean validEscapes(String raw) {
    for (int i = raw.indexOf('%'); i >= 0; i = raw.indexOf('%', i + 1)) {
      if (i + 2 >= raw.length() || Character.digit(raw.charAt(i + 1), 16) < 0
          || Character.digit(raw.charAt(i + 2), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  /** Strict percent-decoding to UTF-8 (empty when an escape or the bytes are malformed). */
  static Optional<String> decode(String raw) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        if (i + 2 >= raw.length()) {
          return Optional.empty();
        }
        int high = Character.digit(raw.charAt(i + 1), 16);
        int low = Character.digit(raw.charAt(i + 2), 16);
        if (high < 0 || low < 0) {
          return Optional.empty();
        }
        bytes.write(high * 16 + low);
        i += 2;
      } else {
        bytes.write(c < 0x80 ? c : '?');
      }
    }
    try {
      return Optional.of(StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString());
    } catch (CharacterCodingException e) {
      return Optional.empty();
    }
  }
}
