package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/** The live, immutable set of plugins one scheduling round uses, and its description for the API. */
public record PluginSet(List<FilterPlugin> filters, List<WeightedScore> scores, List<PluginState> states) {

  public record WeightedScore(ScorePlugin plugin, int weight) {
  }

  public PluginSet {
    filters = List.copyOf(filters);
    scores = List.copyOf(scores);
    states = List.copyOf(states);
  }
}
