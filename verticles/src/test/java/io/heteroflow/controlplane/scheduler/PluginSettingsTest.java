package io.heteroflow.controlplane.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.controlplane.scheduler.framework.InvalidSettingException;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.PluginSetting;
import io.heteroflow.controlplane.scheduler.framework.PluginSet;
import io.heteroflow.controlplane.scheduler.framework.PluginState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A plugin's declared settings: one schema validates every type, names the bad setting, fills defaults. */
class PluginSettingsTest {
  /** What the example plugin's factory saw: its settings come validated and complete. */
  record Probe(long slots, double ratio, boolean strict, String mode) {
  }

  static final PluginDefinition EXAMPLE = PluginDefinition.of("example",
      args -> new Probe(args.integer("slots"), args.decimal("ratio"), args.bool("strict"), args.string("mode")),
      PluginSetting.integer("slots", 4, 1, 64, "slots per node"),
      PluginSetting.decimal("ratio", 0.5, 0, 1, "a fraction"),
      PluginSetting.bool("strict", false, "refuse instead of prefer"),
      PluginSetting.oneOf("mode", "fast", List.of("fast", "careful"), "how"));

  static Stream<Arguments> values() {
    return Stream.of(
        Arguments.of("slots", 8, 8L, null),
        Arguments.of("slots", 64L, 64L, null),
        Arguments.of("slots", 0, null, "must be an integer between 1 and 64 (was 0)"),
        Arguments.of("slots", 65, null, "must be an integer between 1 and 64 (was 65)"),
        Arguments.of("slots", 2.5, null, "must be an integer between 1 and 64 (was 2.5)"),
        Arguments.of("slots", "8", null, "must be an integer between 1 and 64 (was 8)"),
        Arguments.of("ratio", 1, 1.0, null),
        Arguments.of("ratio", 0.25, 0.25, null),
        Arguments.of("ratio", 1.5, null, "must be a number between 0.0 and 1.0 (was 1.5)"),
        Arguments.of("ratio", Double.NaN, null, "must be a number between 0.0 and 1.0 (was NaN)"),
        Arguments.of("ratio", true, null, "must be a number between 0.0 and 1.0 (was true)"),
        Arguments.of("strict", true, true, null),
        Arguments.of("strict", "true", null, "must be true or false"),
        Arguments.of("strict", 1, null, "must be true or false"),
        Arguments.of("mode", "careful", "careful", null),
        Arguments.of("mode", "Careful", null, "must be one of fast, careful"),
        Arguments.of("mode", 3, null, "must be one of fast, careful"));
  }

  @ParameterizedTest(name = "{0} = {1}")
  @MethodSource("values")
  void eachTypeAcceptsItsValuesAndRefusesOthersNamingTheSetting(String setting, Object given, Object expected,
                                                                String problem) {
    if (problem == null) {
      Map<String, Object> settings = EXAMPLE.settings(Map.of(), Map.of(setting, given));
      assertEquals(expected, settings.get(setting));
      assertEquals(4, settings.size(), "every setting resolved: " + settings);
    } else {
      InvalidSettingException refused = assertThrows(InvalidSettingException.class,
          () -> EXAMPLE.settings(Map.of(), Map.of(setting, given)));
      assertEquals(setting, refused.setting());
      assertEquals(problem, refused.getMessage());
      assertFalse(refused.unknown());
    }
  }

  @Test
  void anUnknownSettingIsRefusedByNameListingTheKnownOnes() {
    InvalidSettingException refused = assertThrows(InvalidSettingException.class,
        () -> EXAMPLE.settings(Map.of(), Map.of("slots", 2, "turbo", true)));
    assertEquals("turbo", refused.setting());
    assertTrue(refused.unknown());
    assertEquals("is not a setting of example (its settings: slots, ratio, strict, mode)", refused.getMessage());
    InvalidSettingException none = assertThrows(InvalidSettingException.class,
        () -> PluginDefinition.of("plain", Object::new).settings(Map.of(), Map.of("x", 1)));
    assertEquals("is not a setting of plain (it has none)", none.getMessage());
  }

  @Test
  void anUpdateKeepsTheOtherSettingsAndAbsentOnesTakeTheirDefaults() {
    Map<String, Object> current = EXAMPLE.settings(Map.of(), Map.of("slots", 16, "mode", "careful"));
    Map<String, Object> updated = EXAMPLE.settings(current, Map.of("strict", true));
    assertEquals(Map.of("slots", 16L, "ratio", 0.5, "strict", true, "mode", "careful"), updated);
  }

  @Test
  void theFactoryIsBuiltFromTheStoredSettingsAndTheListingShowsThem() {
    PluginRegistry registry = new PluginRegistry(Fixtures.CONFIG)
        .register(EXAMPLE, new PluginConfig("example", true, 1, Map.of("ratio", 0.75)));
    PluginState defaults = registry.build(Map.of()).state("example");
    assertEquals(Map.of("slots", 4L, "ratio", 0.75, "strict", false, "mode", "fast"), defaults.extra(),
        "conf/config.yaml's value over the schema's default");
    assertEquals(4, defaults.settings().size());
    Map<String, Object> stored = new HashMap<>(Map.of("slots", 32L, "mode", "careful", "gone", 1));
    PluginSet set = registry.build(Map.of("example", new PluginConfig("example", true, 1, stored)));
    assertEquals(Map.of("slots", 32L, "ratio", 0.75, "strict", false, "mode", "careful"),
        set.state("example").extra(), "a setting the schema no longer has is dropped");
  }

  @Test
  void aBadDefaultStopsTheRegistrationNamingTheSetting() {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> new PluginRegistry(
        Fixtures.CONFIG).register(EXAMPLE, new PluginConfig("example", true, 1, Map.of("mode", "slow"))));
    assertEquals("plugins.example.extra.mode: must be one of fast, careful", refused.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> PluginSetting.integer("slots", 0, 1, 64, "a default outside its own range"));
    assertThrows(IllegalArgumentException.class, () -> new PluginRegistry(Fixtures.CONFIG)
        .registerLocked(EXAMPLE), "a locked plugin takes no settings");
  }

  @Test
  void thePreemptStageIsDeclaredOnceAndValidatedByTheSchema() {
    PluginRegistry registry = io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins.registry(Fixtures.CONFIG);
    PluginRegistry.Registration preempt = registry.find("preempt").orElseThrow();
    assertEquals(List.of("preempt_stage", "min_runtime_seconds", "preempt_after_wait_seconds"),
        preempt.settings().stream().map(PluginSetting::name).toList());
    InvalidSettingException refused = assertThrows(InvalidSettingException.class,
        () -> preempt.definition().settings(Map.of(), Map.of("preempt_stage", "always")));
    assertEquals("preempt_stage: must be one of disabled, scheduled, running", refused.describe());
    assertEquals("scheduled", preempt.definition().settings(Map.of(), Map.of("preempt_stage", "scheduled"))
        .get("preempt_stage"));
  }
}
