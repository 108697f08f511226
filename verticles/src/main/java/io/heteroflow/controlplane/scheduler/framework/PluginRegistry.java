package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Name → factory registry of scheduler plugins, with each plugin's kind and whether it is locked on.
 * {@link #build} turns persisted configuration into the live {@link PluginSet}: locked filters are always
 * on whatever the configuration says, and of two mutually exclusive score plugins the winner stays on.
 */
public final class PluginRegistry {

  /** How one plugin is made and what it is. */
  public record Registration(String name, PluginKind kind, boolean locked, Supplier<Object> factory,
                             PluginConfig defaults) {
  }

  private final Map<String, Registration> registrations = new LinkedHashMap<>();
  /** loser → winner: when both are asked for, the winner stays on (SPEC §2.3: binpack beats spread). */
  private final Map<String, String> exclusive = new LinkedHashMap<>();

  public PluginRegistry register(String name, PluginKind kind, boolean locked, Supplier<Object> factory,
                                 PluginConfig defaults) {
    registrations.put(name, new Registration(name, kind, locked, factory, defaults));
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

  /** Builds the live plugin set from persisted configuration; a plugin without configuration takes its defaults. */
  public PluginSet build(Map<String, PluginConfig> persisted) {
    Map<String, PluginConfig> effective = new LinkedHashMap<>();
    for (Registration registration : registrations.values()) {
      PluginConfig config = persisted.getOrDefault(registration.name(), registration.defaults());
      if (registration.locked()) {
        config = new PluginConfig(registration.name(), true, 0, Map.of());
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
    List<FilterPlugin> filters = new ArrayList<>();
    List<PluginSet.WeightedScore> scores = new ArrayList<>();
    List<PluginState> states = new ArrayList<>();
    for (Registration registration : registrations.values()) {
      PluginConfig config = effective.get(registration.name());
      states.add(new PluginState(registration.name(), registration.kind(), config.enabled(), config.weight(),
          registration.locked(), config.extra()));
      if (!config.enabled()) {
        continue;
      }
      Object plugin = registration.factory().get();
      if (plugin instanceof FilterPlugin filter) {
        filters.add(filter);
      }
      if (plugin instanceof ScorePlugin score && config.weight() > 0) {
        scores.add(new PluginSet.WeightedScore(score, config.weight()));
      }
    }
    return new PluginSet(filters, scores, states);
  }
}
