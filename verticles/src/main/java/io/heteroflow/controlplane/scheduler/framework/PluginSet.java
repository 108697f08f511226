package io.heteroflow.controlplane.scheduler.framework;

import java.util.ArrayList;
import java.util.List;

/**
 * The live, immutable set of plugins one scheduling round uses, per extension point in registration order, and
 * its description for the API. {@code bind} and {@code shardPlacer} are the first enabled plugins that pick cards
 * / place shards (null: the pipeline's defaults).
 */
public record PluginSet(List<PreFilterPlugin> preFilters, List<FilterPlugin> filters,
                        List<PostFilterPlugin> postFilters, List<PreScorePlugin> preScores,
                        List<WeightedScore> scores, List<ReservePlugin> reserves, BindPlugin bind,
                        ShardPlacer shardPlacer, List<PluginState> states) {

  public record WeightedScore(ScorePlugin plugin, int weight) {
  }

  public PluginSet {
    preFilters = List.copyOf(preFilters);
    filters = List.copyOf(filters);
    postFilters = List.copyOf(postFilters);
    preScores = List.copyOf(preScores);
    scores = List.copyOf(scores);
    reserves = List.copyOf(reserves);
    states = List.copyOf(states);
  }

  public PluginState state(String name) {
    return states.stream().filter(state -> state.name().equals(name)).findFirst().orElse(null);
  }

  /**
   * Whether a node's verdict and score depend only on the task's shape and the node, so the snapshot's decision
   * memo may answer: no plugin sees the whole task or candidate list first (PreFilter, PreScore) or rescales
   * against the other candidates (NormalizeScore).
   */
  public boolean memoizable() {
    return preFilters.isEmpty() && preScores.isEmpty() && !normalizes();
  }

  /**
   * Whether the memo may answer for this task: as {@link #memoizable()}, except that a PreFilter plugin that does
   * not {@link PreFilterPlugin#concerns concern} the task does not count (e.g. replica-spread for a task that is no
   * service replica), so such a plugin costs the memo only for the tasks it judges.
   */
  public boolean memoizable(TaskRequest task) {
    if (!preScores.isEmpty() || normalizes()) {
      return false;
    }
    for (PreFilterPlugin preFilter : preFilters) {
      if (preFilter.concerns(task)) {
        return false;
      }
    }
    return true;
  }

  public boolean normalizes() {
    for (WeightedScore score : scores) {
      if (score.plugin() instanceof NormalizeScorePlugin) {
        return true;
      }
    }
    return false;
  }

  /** This set with other PreScore plugins (the rest shared): for tests and probes that compare paths. */
  public PluginSet withPreScores(List<PreScorePlugin> others) {
    return new PluginSet(preFilters, filters, postFilters, others, scores, reserves, bind, shardPlacer, states);
  }

  /** Collects plugins by the extension points they implement (one plugin may implement several). */
  static final class Builder {
    private final List<PreFilterPlugin> preFilters = new ArrayList<>();
    private final List<FilterPlugin> filters = new ArrayList<>();
    private final List<PostFilterPlugin> postFilters = new ArrayList<>();
    private final List<PreScorePlugin> preScores = new ArrayList<>();
    private final List<WeightedScore> scores = new ArrayList<>();
    private final List<ReservePlugin> reserves = new ArrayList<>();
    private final List<PluginState> states = new ArrayList<>();
    private BindPlugin bind;
    private ShardPlacer shardPlacer;

    void state(PluginState state) {
      states.add(state);
    }

    void add(Object plugin, int weight) {
      if (plugin instanceof PreFilterPlugin preFilter) {
        preFilters.add(preFilter);
      }
      if (plugin instanceof FilterPlugin filter) {
        filters.add(filter);
      }
      if (plugin instanceof PostFilterPlugin postFilter) {
        postFilters.add(postFilter);
      }
      if (plugin instanceof PreScorePlugin preScore) {
        preScores.add(preScore);
      }
      if (plugin instanceof ScorePlugin score && weight > 0) {
        scores.add(new WeightedScore(score, weight));
      }
      if (plugin instanceof ReservePlugin reserve) {
        reserves.add(reserve);
      }
      if (plugin instanceof BindPlugin picker && bind == null) {
        bind = picker;
      }
      if (plugin instanceof ShardPlacer placer && shardPlacer == null) {
        shardPlacer = placer;
      }
    }

    PluginSet build() {
      return new PluginSet(preFilters, filters, postFilters, preScores, scores, reserves, bind, shardPlacer, states);
    }
  }
}
