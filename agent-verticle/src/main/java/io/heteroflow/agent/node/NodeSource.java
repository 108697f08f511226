package io.heteroflow.agent.node;

/** Where an agent's picture of its host comes from: a described (simulated) node, or detection on a real host. */
public interface NodeSource {
  String nodeId();

  /** The CPU cores tasks may use (sizes the worker pool). */
  int cpuCores();

  /** A fresh reading; may block (the agent calls it on a worker thread). */
  NodeReading read();
}
