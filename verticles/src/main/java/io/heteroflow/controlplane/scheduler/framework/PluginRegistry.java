package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.controlplane.config.SchedulerConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * Name → {@link PluginDefinition} registry of every plugin the scheduler runs, the always-on filters included
 * ({@link #registerLocked}). {@link #build} turns persisted configuration into the live {@link PluginSet}: locked
 * plugins are on whatever any configuration says, of two mutually exclusive plugins asked for together the
 * winner stays on, and each plugin is made by its factory from its validated settings and the configuration.
 * Filters run in registration order (so a reason names the first cause); registering a name again replaces
 * the plugin in place.
 */
public final class PluginRegistry {

  /** One registered plugin: how it is made, the extension points it implements, whether it is locked on. */
  public record Registration(PluginDefinition definition, String kind, boolean locked, PluginConfig defaults) {
    public String name() {
      return definition.name();
    }

    public List<PluginSetting> settings() {
      return definition.schema();
    }
  }

  private final SchedulerConfig config;
  private final Map<String, Registration> registrations = new LinkedHashMap<>();
  /** loser → winner: when both are asked for, the winner stays on (SPEC §2.3: binpack beats spread). */
  private final Map<String, String> exclusive = new LinkedHashMap<>();

  public PluginRegistry(SchedulerConfig config) {
    this.config = config;
  }

  /** An always-on plugin (a correctness filter): on whatever any configuration says, no weight, no settings. */
  public PluginRegistry registerLocked(PluginDefinition definition) {
    if (!definition.schema().isEmpty()) {
      throw new IllegalArgumentException(definition.name() + ": a locked plugin takes no settings");
    }
    return add(definition, true, new PluginConfig(definition.name(), true, 0, Map.of()));
  }

  /**
   * A plugin the operator switches and weighs; {@code defaults} (from {@code conf/config.yaml}, null: off, weight
   * 0) are checked against the plugin's schema now, so a bad default stops the start naming the setting.
   */
  public PluginRegistry register(PluginDefinition definition, PluginConfig defaults) {
    PluginConfig given = defaults == null ? new PluginConfig(definition.name(), false, 0, Map.of()) : defaults;
    Map<String, Object> settings;
    try {
      settings = definition.settings(Map.of(), given.extra());
    } catch (InvalidSettingException bad) {
      throw new IllegalArgumentException("plugins." + definition.name() + ".extra." + bad.describe(), bad);
    }
    return add(definition, false, new PluginConfig(definition.name(), given.enabled(), given.weight(), settings));
  }

  private PluginRegistry add(PluginDefinition definition, boolean locked, PluginConfig defaults) {
    Object sample = definition.factory().apply(new PluginArgs(defaults.extra(), config));
    registrations.put(definition.name(), new Registration(definition, kindOf(sample), locked, defaults));
    return this;
  }

  public PluginRegistry mutuallyExclusive(String winner, String loser) {
    exclusive.put(loser, winner);
    return this;
  }

  public Optional<Registration> find(String name) {
    return Optional.ofNullable(registrations.get(name));
  }

  public List<Registration> registrations() {
    return new ArrayList<>(registrations.values());
  }

  /** The plugin that must be switched off when {@code name} is switched on, if any. */
  public Optional<String> exclusivePartner(String name) {
    for (Map.Entry<String, String> pair : exclusive.entrySet()) {
      if (pair.getKey().equals(name)) {
        return Optional.of(pair.getValue());
      }
      if (pair.getValue().equals(name)) {
        return Optional.of(pair.getKey());
      }
    }
    return Optional.empty();
  }

  /**
   * The effective configuration of every plugin: persisted, else the defaults; locks and exclusivity applied;
   * {@code extra} holds every setting of the plugin's schema (stored values over the defaults).
   */
  public Map<String, PluginConfig> effective(Map<String, PluginConfig> persisted) {
    Map<String, PluginConfig> effective = new LinkedHashMap<>();
    for (Registration registration : registrations.values()) {
      PluginConfig config = registration.defaults();
      PluginConfig stored = persisted.get(registration.name());
      if (stored != null && !registration.locked()) {
        Map<String, Object> extra = new HashMap<>(config.extra());
        extra.putAll(stored.extra());
        config = new PluginConfig(registration.name(), stored.enabled(), stored.weight(),
            registration.definition().settingsOrDefaults(extra));
      }
      effective.put(registration.name(), config);
    }
    exclusive.forEach((loser, winner) -> {
      PluginConfig lost = effective.get(loser);
      PluginConfig won = effective.get(winner);
      if (lost != null && won != null && lost.enabled() && won.enabled()) {
        effective.put(loser, new PluginConfig(loser, false, lost.weight(), lost.extra()));
      }
    });
    return effective;
  }

  public PluginSet build(Map<String, PluginConfig> persisted) {
    Map<String, PluginConfig> effective = effective(persisted);
    PluginSet.Builder set = new PluginSet.Builder();
    for (Registration registration : registrations.values()) {
      PluginConfig config = effective.get(registration.name());
      set.state(new PluginState(registration.name(), registration.kind(), config.enabled(), config.weight(),
          registration.locked(), config.extra(), registration.settings()));
      if (config.enabled()) {
        set.add(registration.definition().factory().apply(new PluginArgs(config.extra(), this.config)), config.weight());
      }
    }
    return set.build();
  }

  private static String kindOf(Object plugin) {
    StringJoiner kind = new StringJoiner("+");
    add(kind, plugin instanceof ScorePlugin, "score");
    add(kind, plugin instanceof FilterPlugin, "filter");
    add(kind, plugin instanceof PreFilterPlugin, "prefilter");
    add(kind, plugin instanceof PostFilterPlugin, "postfilter");
    add(kind, plugin instanceof PreScorePlugin, "prescore");
    add(kind, plugin instanceof ReservePlugin, "reserve");
    add(kind, plugin instanceof BindPlugin, "bind");
    add(kind, plugin instanceof ShardPlacer, "shards");
    return kind.length() == 0 ? "config" : kind.toString();
  }

  private static void add(StringJoiner kind, boolean implemented, String point) {
    if (implemented) {
      kind.add(point);
    }
  }
}
