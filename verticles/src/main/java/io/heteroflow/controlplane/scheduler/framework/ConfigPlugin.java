package io.heteroflow.controlplane.scheduler.framework;

import java.util.Map;

/** A plugin that is only configuration (like {@code preempt}): it validates its extra settings. */
public interface ConfigPlugin {
  String name();

  /** The extra settings after applying {@code update}; throws IllegalArgumentException naming a bad key. */
  Map<String, Object> validateExtra(Map<String, Object> current, Map<String, Object> update);
}
