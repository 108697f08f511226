package io.heteroflow.controlplane.config;

import java.util.Map;
import java.util.Set;

/**
 * The API's settings in conf/config.yaml ({@code api:}): per-token rate limits. Every parse error names the field
 * by its path ({@code api.rate_limits.burst}).
 */
public record ApiConfig(RateLimits rateLimits) {
  private static final Set<String> API = Set.of("rate_limits");
  private static final Set<String> RATE_LIMITS = Set.of("enabled", "requests_per_second", "burst", "admin_exempt",
      "max_tracked_tokens");

  /**
   * A token bucket per token: {@code burst} requests at once, refilled at {@code requestsPerSecond}; the admin token
   * is exempt unless {@code adminExempt} is false (then it has a bucket like any token); at most
   * {@code maxTrackedTokens} buckets are kept (least recently used evicted).
   */
  public record RateLimits(boolean enabled, double requestsPerSecond, int burst, boolean adminExempt,
                           int maxTrackedTokens) {
    public static final RateLimits DEFAULTS = new RateLimits(true, 50, 100, true, 100_000);

    public RateLimits {
      if (!(requestsPerSecond > 0) || requestsPerSecond > 1_000_000) {
        throw new IllegalArgumentException("api.rate_limits.requests_per_second must be a number above 0 and at most"
            + " 1000000");
      }
      if (burst < 1 || burst > 1_000_000) {
        throw new IllegalArgumentException("api.rate_limits.burst must be an integer between 1 and 1000000");
      }
      if (maxTrackedTokens < 1 || maxTrackedTokens > 10_000_000) {
        throw new IllegalArgumentException("api.rate_limits.max_tracked_tokens must be an integer between 1 and"
            + " 10000000");
      }
    }
  }

  public static final ApiConfig DEFAULTS = new ApiConfig(RateLimits.DEFAULTS);

  /** The {@code api:} section (null: the defaults). */
  static ApiConfig parse(Object section, String source) {
    Map<?, ?> api = mapping(section, source, "api", API);
    Map<?, ?> limits = mapping(api.get("rate_limits"), source, "api.rate_limits", RATE_LIMITS);
    RateLimits defaults = RateLimits.DEFAULTS;
    try {
      return new ApiConfig(new RateLimits(bool(limits, "enabled", defaults.enabled(), source),
          number(limits, "requests_per_second", defaults.requestsPerSecond(), source),
          integer(limits, "burst", defaults.burst(), source),
          bool(limits, "admin_exempt", defaults.adminExempt(), source),
          integer(limits, "max_tracked_tokens", defaults.maxTrackedTokens(), source)));
    } catch (IllegalArgumentException e) {
      throw e.getMessage().startsWith(source) ? e : new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  private static Map<?, ?> mapping(Object value, String source, String where, Set<String> known) {
    if (value == null) {
      return Map.of();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException(source + ": " + where + ": expected a mapping");
    }
    for (Object key : map.keySet()) {
      if (!known.contains(String.valueOf(key))) {
        throw new IllegalArgumentException(source + ": " + where + ": unknown key '" + key + "'");
      }
    }
    return map;
  }

  private static boolean bool(Map<?, ?> map, String key, boolean fallback, String source) {
    Object value = map.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Boolean flag)) {
      throw new IllegalArgumentException(source + ": api.rate_limits." + key + " must be true or false");
    }
    return flag;
  }

  private static double number(Map<?, ?> map, String key, double fallback, String source) {
    Object value = map.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Number number)) {
      throw new IllegalArgumentException(source + ": api.rate_limits." + key + " must be a number");
    }
    return number.doubleValue();
  }

  private static int integer(Map<?, ?> map, String key, int fallback, String source) {
    Object value = map.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Integer || value instanceof Long) || ((Number) value).longValue() != ((Number) value).intValue()) {
      throw new IllegalArgumentException(source + ": api.rate_limits." + key + " must be an integer");
    }
    return ((Number) value).intValue();
  }
}
