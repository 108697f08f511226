package io.heteroflow.controlplane.scheduler.framework;

import java.util.List;

/**
 * Bind extension point: which whole cards of the chosen node the task gets (the store then persists them in
 * one transaction). Empty when it cannot be satisfied.
 */
public interface BindPlugin {
  String name();

  List<Integer> pickCards(TaskRequest task, NodeInfo node, CycleState state);
}
