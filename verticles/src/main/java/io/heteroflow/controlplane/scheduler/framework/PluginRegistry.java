package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.function.Supplier;

/**
 * Name → factory registry of scheduler plugins. {@link #build} turns persisted configuration into the live
 * {@link PluginSet}: locked plugins are on whatever any configuration says, and of two mutually exclusive
 * plugins asked for together the winner stays on. Filters run in registration order.
 */
public final class PluginRegistry {

  /** How one plugin is made, which extension points it implements, whether it is locked on. */
  public record Registration(String name, String kind, boolean locked, Supplier<Object> factory,
                             PluginConfig defaults) {
  }

  private final Map<String, Registration> registrations = new LinkedHashMap<>();
  /** loser → winner: when both are asked for, the winner stays on (SPEC §2.3: binpack beats spread). */
  private final Map<String, String> exclusive = new LinkedHashMap<>();

  public PluginRegistry register(String name, boolean locked, Supplier<Object> factory, PluginConfig defaults) {
    registrations.put(name, new Registration(name, kindOf(factory.get()), locked, factory, defaults));
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

  /** The effective configuration of every plugin: persisted, else the defaults; locks and exclusivity applied. */
  public Map<String, PluginConfig> effective(Map<String, PluginConfig> persisted) {
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
    return effective;
  }

  public PluginSet build(Map<String, PluginConfig> persisted) {
    Map<String, PluginConfig> effective = effective(persisted);
    List<FilterPlugin> filters = new ArrayList<>();
    List<PreScorePlugin> preScores = new ArrayList<>();
    List<PluginSet.WeightedScore> scores = new ArrayList<>();
    List<PostScorePlugin> postScores = new ArrayList<>();
    BindPlugin bind = null;
    ShardPlacer shardPlacer = null;
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
      if (plugin instanceof PreScorePlugin preScore) {
        preScores.add(preScore);
      }
      if (plugin instanceof ScorePlugin score && config.weight() > 0) {
        scores.add(new PluginSet.WeightedScore(score, config.weight()));
      }
      if (plugin instanceof PostScorePlugin postScore) {
        postScores.add(postScore);
      }
      if (plugin instanceof BindPlugin picker && bind == null) {
        bind = picker;
      }
      if (plugin instanceof ShardPlacer placer && shardPlacer == null) {
        shardPlacer = placer;
      }
    }
    return new PluginSet(filters, preScores, scores, postScores, bind, shardPlacer, states);
  }

  private static String kindOf(Object plugin) {
    StringJoiner kind = new StringJoiner("+");
    if (plugin instanceof ScorePlugin) {
      kind.add("score");
    }
    if (plugin instanceof FilterPlugin) {
      kind.add("filter");
    }
    if (plugin instanceof PreScorePlugin) {
      kind.add("prescore");
    }
    if (plugin instanceof BindPlugin) {
      kind.add("bind");
    }
    if (plugin instanceof ShardPlacer) {
      kind.add("shards");
    }
    if (plugin instanceof ConfigPlugin) {
      kind.add("config");
    }
    return kind.toString();
  }
}
