package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * How a plugin is made: its name, the factory that builds it from its {@link PluginArgs}, and the schema of its
 * settings, declared once. {@link #settings(Map, Map)} is the one validation every path uses — the API's PUT,
 * {@code conf/config.yaml}'s defaults and the registry's build — so no route or loader knows any plugin's settings.
 */
public record PluginDefinition(String name, Function<PluginArgs, Object> factory, List<PluginSetting> schema) {

  public PluginDefinition {
    schema = List.copyOf(schema);
    Set<String> names = new HashSet<>();
    for (PluginSetting setting : schema) {
      if (!names.add(setting.name()) || "weight".equals(setting.name())) {
        throw new IllegalArgumentException(name + ": setting '" + setting.name() + "' is declared twice or reserved");
      }
    }
  }

  /** A plugin without settings and without need of the configuration. */
  public static PluginDefinition of(String name, Supplier<Object> factory) {
    return new PluginDefinition(name, args -> factory.get(), List.of());
  }

  public static PluginDefinition of(String name, Function<PluginArgs, Object> factory, PluginSetting... schema) {
    return new PluginDefinition(name, factory, List.of(schema));
  }

  /**
   * Every setting's value after applying {@code update} to {@code current} (both may be partial; absent settings
   * take their defaults). Throws {@link InvalidSettingException} naming the first unknown or invalid setting.
   */
  public Map<String, Object> settings(Map<String, Object> current, Map<String, Object> update) {
    for (String key : update.keySet()) {
      setting(key);
    }
    Map<String, Object> resolved = new LinkedHashMap<>();
    for (PluginSetting setting : schema) {
      Object raw = update.containsKey(setting.name()) ? update.get(setting.name()) : current.get(setting.name());
      resolved.put(setting.name(), raw == null ? setting.defaultValue() : setting.validate(raw));
    }
    return resolved;
  }

  /**
   * The settings a stored configuration gives, for building the live set: a stored value the schema no longer
   * accepts (an older version's) falls back to the default instead of stopping the scheduler.
   */
  public Map<String, Object> settingsOrDefaults(Map<String, Object> stored) {
    Map<String, Object> resolved = new LinkedHashMap<>();
    for (PluginSetting setting : schema) {
      Object value = setting.defaultValue();
      if (stored.get(setting.name()) != null) {
        try {
          value = setting.validate(stored.get(setting.name()));
        } catch (InvalidSettingException outdated) {
          value = setting.defaultValue();
        }
      }
      resolved.put(setting.name(), value);
    }
    return resolved;
  }

  public PluginSetting setting(String key) {
    for (PluginSetting setting : schema) {
      if (setting.name().equals(key)) {
        return setting;
      }
    }
    List<String> known = new ArrayList<>();
    schema.forEach(setting -> known.add(setting.name()));
    throw InvalidSettingException.unknown(key, "is not a setting of " + name
        + (known.isEmpty() ? " (it has none)" : " (its settings: " + String.join(", ", known) + ")"));
  }
}
