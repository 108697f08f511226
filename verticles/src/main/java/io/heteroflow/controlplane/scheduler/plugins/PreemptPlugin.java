package io.heteroflow.controlplane.scheduler.plugins;

import io.heteroflow.controlplane.scheduler.framework.PluginDefinition;
import io.heteroflow.controlplane.scheduler.framework.PluginSetting;
import java.util.List;

/**
 * {@code preempt} (SPEC §6): configuration only, no extension point yet (preemption will join through
 * PostFilter). Its one setting {@code preempt_stage} is {@code disabled}, {@code scheduled} or {@code running}
 * (default): which victims preemption may take.
 */
public final class PreemptPlugin {
  public static final String NAME = "preempt";
  public static final String STAGE = "preempt_stage";
  public static final List<String> STAGES = List.of("disabled", "scheduled", "running");
  public static final PluginDefinition DEFINITION = PluginDefinition.of(NAME,
      args -> new PreemptPlugin(args.string(STAGE)),
      PluginSetting.oneOf(STAGE, "running", STAGES, "which victims preemption may take"));

  private final String stage;

  public PreemptPlugin(String stage) {
    this.stage = stage;
  }

  public String name() {
    return NAME;
  }

  /** The configured stage: disabled, scheduled or running. */
  public String stage() {
    return stage;
  }
}
