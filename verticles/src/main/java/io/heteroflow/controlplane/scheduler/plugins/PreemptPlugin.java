package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.ConfigPlugin;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code preempt} (SPEC §6): configuration only. {@code preempt_stage} is {@code disabled}, {@code scheduled}
 * or {@code running} (default); it says which victims preemption may take.
 */
public final class PreemptPlugin implements ConfigPlugin {
  public static final String NAME = "preempt";
  public static final String STAGE = "preempt_stage";
  public static final Set<String> STAGES = Set.of("disabled", "scheduled", "running");

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Map<String, Object> validateExtra(Map<String, Object> current, Map<String, Object> update) {
    Map<String, Object> extra = new HashMap<>(current);
    for (Map.Entry<String, Object> entry : update.entrySet()) {
      if (!STAGE.equals(entry.getKey())) {
        throw new IllegalArgumentException(entry.getKey());
      }
      if (!STAGES.contains(String.valueOf(entry.getValue()))) {
        throw new IllegalArgumentException(STAGE);
      }
      extra.put(STAGE, entry.getValue());
    }
    return extra;
  }
}
