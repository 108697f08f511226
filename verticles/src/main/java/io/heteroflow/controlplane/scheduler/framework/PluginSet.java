package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;
import java.util.Map;

/**
 * The live, immutable set of plugins one scheduling round uses, and its description for the API. {@code bind}
 * and {@code shardPlacer} are the first enabled plugins that pick cards / place shards (null: the defaults).
 */
public record PluginSet(List<FilterPlugin> filters, List<PreScorePlugin> preScores, List<WeightedScore> scores,
                        List<PostScorePlugin> postScores, BindPlugin bind, ShardPlacer shardPlacer,
                        List<PluginState> states) {

  public record WeightedScore(ScorePlugin plugin, int weight) {
  }

  public PluginSet {
    filters = List.copyOf(filters);
    preScores = List.copyOf(preScores);
    scores = List.copyOf(scores);
    postScores = List.copyOf(postScores);
    states = List.copyOf(states);
  }

  public PluginState state(String name) {
    return states.stream().filter(state -> state.name().equals(name)).findFirst().orElse(null);
  }

  /** The extra settings of an enabled plugin, or null when it is disabled or unknown. */
  public Map<String, Object> extraIfEnabled(String name) {
    PluginState state = state(name);
    return state == null || !state.enabled() ? null : state.extra();
  }
}
