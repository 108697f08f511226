package io.heteroflow.controlplane.scheduler.framework;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One setting a plugin declares: its name (the key in {@code extra}, in {@code conf/config.yaml} and in the body
 * of {@code PUT /api/v1/plugins/{name}}), its type, its range or choices and its default. {@link #validate}
 * turns a raw JSON / YAML value into the setting's value or refuses it with a message that reads after the name
 * ("must be one of disabled, scheduled, running").
 */
public record PluginSetting(String name, Type type, Object defaultValue, double min, double max, List<String> choices,
                            String description) {

  public enum Type { INT, DOUBLE, BOOL, ENUM }

  public PluginSetting {
    choices = List.copyOf(choices);
    Object checked = validate(type, min, max, choices, defaultValue);
    if (checked == null) {
      throw new IllegalArgumentException(name + ": the default " + defaultValue + " " + problem(type, min, max, choices));
    }
    defaultValue = checked;
  }

  public static PluginSetting integer(String name, long defaultValue, long min, long max, String description) {
    return new PluginSetting(name, Type.INT, defaultValue, min, max, List.of(), description);
  }

  public static PluginSetting decimal(String name, double defaultValue, double min, double max, String description) {
    return new PluginSetting(name, Type.DOUBLE, defaultValue, min, max, List.of(), description);
  }

  public static PluginSetting bool(String name, boolean defaultValue, String description) {
    return new PluginSetting(name, Type.BOOL, defaultValue, 0, 0, List.of(), description);
  }

  public static PluginSetting oneOf(String name, String defaultValue, List<String> choices, String description) {
    return new PluginSetting(name, Type.ENUM, defaultValue, 0, 0, choices, description);
  }

  /** The value as the plugin gets it (Long, Double, Boolean or String); throws naming this setting. */
  public Object validate(Object raw) {
    Object value = validate(type, min, max, choices, raw);
    if (value == null) {
      throw new InvalidSettingException(name, problem(type, min, max, choices)
          + (raw == null || type == Type.ENUM || type == Type.BOOL ? "" : " (was " + raw + ")"));
    }
    return value;
  }

  private static Object validate(Type type, double min, double max, List<String> choices, Object raw) {
    return switch (type) {
      case INT -> raw instanceof Integer || raw instanceof Long ? inRange(((Number) raw).longValue(), min, max) : null;
      case DOUBLE -> raw instanceof Number number && !Double.isNaN(number.doubleValue())
          && number.doubleValue() >= min && number.doubleValue() <= max ? number.doubleValue() : null;
      case BOOL -> raw instanceof Boolean value ? value : null;
      case ENUM -> raw instanceof String value && choices.contains(value) ? value : null;
    };
  }

  private static Long inRange(long value, double min, double max) {
    return value >= min && value <= max ? value : null;
  }

  private static String problem(Type type, double min, double max, List<String> choices) {
    return switch (type) {
      case INT -> "must be an integer between " + (long) min + " and " + (long) max;
      case DOUBLE -> "must be a number between " + min + " and " + max;
      case BOOL -> "must be true or false";
      case ENUM -> "must be one of " + String.join(", ", choices);
    };
  }

  /** The schema as the API lists it: {name, type, default, min/max or choices, description}. */
  public Map<String, Object> describe() {
    Map<String, Object> schema = new LinkedHashMap<>();
    schema.put("name", name);
    schema.put("type", type.name().toLowerCase(java.util.Locale.ROOT));
    schema.put("default", defaultValue);
    if (type == Type.INT) {
      schema.put("min", (long) min);
      schema.put("max", (long) max);
    } else if (type == Type.DOUBLE) {
      schema.put("min", min);
      schema.put("max", max);
    } else if (type == Type.ENUM) {
      schema.put("choices", choices);
    }
    schema.put("description", description);
    return schema;
  }
}
