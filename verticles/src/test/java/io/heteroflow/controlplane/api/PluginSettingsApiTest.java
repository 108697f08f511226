package io.heteroflow.controlplane.api;

import static io.heteroflow.testsupport.ControlPlaneHarness.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.heteroflow.testsupport.ControlPlaneHarness;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Plugin settings through the HTTP API on real PostgreSQL: {@code PUT /api/v1/plugins/{name}} checks each setting
 * against the schema its plugin declares (a 400 names it), the listing shows the schema, and the locked built-in
 * filters are listed first and refuse every change.
 */
class PluginSettingsApiTest {
  private static final List<String> LOCKED = List.of("availability", "tenant", "resource-prefilter", "affinity",
      "gpu-filter", "resource-filter");
  @RegisterExtension
  static final ControlPlaneHarness cp = new ControlPlaneHarness();

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of("preempt", "{\"preempt_stage\":\"always\"}", "invalid_field", "preempt_stage",
            "preempt_stage: must be one of disabled, scheduled, running"),
        Arguments.of("preempt", "{\"preempt_stage\":3}", "invalid_field", "preempt_stage",
            "preempt_stage: must be one of disabled, scheduled, running"),
        Arguments.of("preempt", "{\"weight\":3,\"stage\":\"running\"}", "unknown_field", "stage",
            "stage: is not a setting of preempt (its settings: preempt_stage, min_runtime_seconds, preempt_after_wait_seconds)"),
        Arguments.of("frag", "{\"pressure_cards\":11}", "invalid_field", "pressure_cards",
            "pressure_cards: must be a number between 0.0 and 10.0 (was 11)"),
        Arguments.of("frag", "{\"pressure_cards\":\"2\"}", "invalid_field", "pressure_cards",
            "pressure_cards: must be a number between 0.0 and 10.0 (was 2)"),
        Arguments.of("spread", "{\"preempt_stage\":\"running\"}", "unknown_field", "preempt_stage",
            "preempt_stage: is not a setting of spread (it has none)"),
        Arguments.of("spread", "{}", "invalid_field", "weight", "weight: give weight"),
        Arguments.of("frag", "{}", "invalid_field", "weight", "weight: give weight and/or pressure_cards"),
        Arguments.of("topology", "{\"weight\":\"3\"}", "invalid_field", "weight", "weight: must be an integer"));
  }

  @ParameterizedTest(name = "PUT {0} {1}")
  @MethodSource("refusals")
  void aBadOrUnknownSettingIsA400NamingIt(String plugin, String body, String code, String field, String message)
      throws Exception {
    JsonObject before = cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200);
    JsonObject refused = cp.json("PUT", "/api/v1/plugins/" + plugin, ADMIN, body, 400);
    assertEquals(code, refused.getString("code"), refused.encode());
    assertEquals(field, refused.getString("field"), refused.encode());
    assertEquals(message, refused.getString("message"));
    assertEquals(before, cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200), "nothing changed");
  }

  @Test
  void aValidSettingIsStoredUsedAndListedWithItsSchema() throws Exception {
    JsonObject changed = cp.json("PUT", "/api/v1/plugins/frag", ADMIN, "{\"pressure_cards\":3.5,\"weight\":4}", 200);
    assertEquals(3.5, plugin(changed, "frag").getJsonObject("extra").getDouble("pressure_cards"));
    assertEquals(4, plugin(changed, "frag").getInteger("weight"));
    assertEquals(changed, cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200));
    JsonObject weightOnly = cp.json("PUT", "/api/v1/plugins/frag", ADMIN, "{\"weight\":1}", 200);
    assertEquals(3.5, plugin(weightOnly, "frag").getJsonObject("extra").getDouble("pressure_cards"),
        "a PUT of the weight keeps the settings");
    cp.json("PUT", "/api/v1/plugins/frag", ADMIN, "{\"pressure_cards\":2}", 200);

    JsonObject stage = cp.json("PUT", "/api/v1/plugins/preempt", ADMIN, "{\"preempt_stage\":\"disabled\"}", 200);
    assertEquals("disabled", plugin(stage, "preempt").getJsonObject("extra").getString("preempt_stage"));
    cp.json("PUT", "/api/v1/plugins/preempt", ADMIN, "{\"preempt_stage\":\"running\"}", 200);

    JsonArray schema = plugin(stage, "preempt").getJsonArray("settings");
    assertEquals(3, schema.size(), "preempt_stage, min_runtime_seconds, preempt_after_wait_seconds");
    JsonObject preemptStage = schema.getJsonObject(0);
    assertEquals("preempt_stage", preemptStage.getString("name"));
    assertEquals("enum", preemptStage.getString("type"));
    assertEquals("running", preemptStage.getString("default"));
    assertEquals(new JsonArray(List.of("disabled", "scheduled", "running")), preemptStage.getJsonArray("choices"));
    JsonObject pressure = plugin(stage, "frag").getJsonArray("settings").getJsonObject(0);
    assertEquals("double", pressure.getString("type"));
    assertEquals(10.0, pressure.getDouble("max"));
    assertEquals(new JsonArray(), plugin(stage, "spread").getJsonArray("settings"));
  }

  @Test
  void replicaSpreadIsListedOnByDefaultAndSwitchable() throws Exception {
    JsonObject listed = plugin(cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200), "replica-spread");
    assertTrue(listed.getBoolean("enabled"), listed.encode());
    assertEquals(2, listed.getInteger("weight"));
    assertTrue(!listed.getBoolean("locked") && listed.getString("kind").contains("score"), listed.encode());
    cp.json("POST", "/api/v1/plugins/replica-spread?action=disable", ADMIN, null, 200);
    assertTrue(!plugin(cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200), "replica-spread")
        .getBoolean("enabled"));
    cp.json("POST", "/api/v1/plugins/replica-spread?action=enable", ADMIN, null, 200);
    assertTrue(plugin(cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200), "replica-spread")
        .getBoolean("enabled"));
  }

  @Test
  void theBuiltInFiltersAreListedFirstAsLockedAndRefuseEveryChange() throws Exception {
    JsonArray plugins = cp.json("GET", "/api/v1/scheduler/plugins", ADMIN, null, 200).getJsonArray("plugins");
    for (int i = 0; i < LOCKED.size(); i++) {
      JsonObject plugin = plugins.getJsonObject(i);
      assertEquals(LOCKED.get(i), plugin.getString("name"), "filter order: SPEC §2.1, then gpu/resource");
      assertTrue(plugin.getBoolean("locked") && plugin.getBoolean("enabled"), plugin.encode());
      assertEquals("filter", plugin.getString("kind"));
    }
    for (String name : LOCKED) {
      JsonObject disable = cp.json("POST", "/api/v1/plugins/" + name + "?action=disable", ADMIN, null, 409);
      assertEquals("plugin_locked", disable.getString("code"), name);
      assertEquals("plugin_locked", cp.json("PUT", "/api/v1/plugins/" + name, ADMIN, "{\"weight\":2}", 409)
          .getString("code"), name);
      assertTrue(plugin(cp.json("POST", "/api/v1/plugins/" + name + "?action=enable", ADMIN, null, 200), name)
          .getBoolean("enabled"), "enabling a locked plugin is a no-op: " + name);
    }
  }

  private static JsonObject plugin(JsonObject plugins, String name) {
    return plugins.getJsonArray("plugins").stream().map(JsonObject.class::cast)
        .filter(plugin -> plugin.getString("name").equals(name)).findFirst().orElseThrow();
  }
}
