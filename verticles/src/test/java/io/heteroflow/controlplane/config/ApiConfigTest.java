package io.heteroflow.controlplane.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code api.rate_limits} in conf/config.yaml: defaults, the packaged file, and errors naming the field. */
class ApiConfigTest {
  private static SchedulerConfig parse(Object rateLimits) {
    return SchedulerConfig.parse(Map.of("api", Map.of("rate_limits", rateLimits)), "test.yaml");
  }

  @Test
  void thePackagedFileAndAnAbsentSectionGiveTheDefaults() {
    assertEquals(ApiConfig.RateLimits.DEFAULTS, SchedulerConfig.defaults().api().rateLimits());
    assertEquals(ApiConfig.DEFAULTS, SchedulerConfig.parse(Map.of(), "test.yaml").api());
  }

  @Test
  void settingsAreRead() {
    ApiConfig.RateLimits limits = parse(Map.of("requests_per_second", 2.5, "burst", 7, "admin_exempt", false,
        "max_tracked_tokens", 10)).api().rateLimits();
    assertEquals(2.5, limits.requestsPerSecond());
    assertEquals(7, limits.burst());
    assertFalse(limits.adminExempt());
    assertTrue(limits.enabled());
    assertEquals(10, limits.maxTrackedTokens());
  }

  @Test
  void errorsNameTheField() {
    assertMessage("api.rate_limits.burst must be an integer", Map.of("burst", "many"));
    assertMessage("api.rate_limits.burst must be an integer", Map.of("burst", 1.5));
    assertMessage("api.rate_limits.requests_per_second must be a number above 0", Map.of("requests_per_second", -1));
    assertMessage("api.rate_limits.admin_exempt must be true or false", Map.of("admin_exempt", "yes"));
    assertMessage("api.rate_limits: unknown key 'requests_per_minute'", Map.of("requests_per_minute", 5));
    assertMessage("api.rate_limits: expected a mapping", 5);
  }

  private static void assertMessage(String expected, Object rateLimits) {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> parse(rateLimits));
    assertTrue(refused.getMessage().startsWith("test.yaml: ") && refused.getMessage().contains(expected),
        refused.getMessage());
  }
}
