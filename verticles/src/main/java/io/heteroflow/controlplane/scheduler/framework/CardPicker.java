package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/** Bind extension point: which cards of the chosen node the task gets. Empty when it cannot be satisfied. */
public interface CardPicker {
  String name();

  List<Integer> pick(TaskRequest task, NodeInfo node);
}
