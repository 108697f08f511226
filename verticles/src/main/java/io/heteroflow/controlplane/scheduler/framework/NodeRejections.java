package io.heteroflow.controlplane.scheduler.framework;

import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Refusals counted by reason, listed in filter-chain order (then most frequent first, then by name), so the
 * message does not depend on node order; the furthest stage names the cause (the tenant boundary wins a tie).
 */
final class NodeRejections {
  private final Map<String, int[]> byReason = new HashMap<>();
  private ReasonCode furthest;
  private int furthestStage = -1;

  void add(NodeEvaluation refused) {
    Status verdict = refused.verdict();
    int stage = refused.stage();
    byReason.computeIfAbsent(verdict.reason(), reason -> new int[] {stage, 0})[1]++;
    if (stage > furthestStage || (stage == furthestStage && verdict.code() == ReasonCode.NoTenantEligibleGPU)) {
      furthestStage = stage;
      furthest = verdict.code();
    }
  }

  Decision decision(int nodeCount) {
    Map<String, Integer> ordered = new LinkedHashMap<>();
    byReason.entrySet().stream()
        .sorted(Comparator.<Map.Entry<String, int[]>>comparingInt(entry -> entry.getValue()[0])
            .thenComparing(entry -> -entry.getValue()[1]).thenComparing(Map.Entry::getKey))
        .forEach(entry -> ordered.put(entry.getKey(), entry.getValue()[1]));
    return Decision.unschedulable(furthest == null ? ReasonCode.NoSchedulableNodes : furthest,
        explain(nodeCount, ordered));
  }

  /** "0/10 nodes are available: 2 offline, 3 not nvidia, 5 fewer than 4 free cards." */
  static String explain(int nodeCount, Map<String, Integer> rejections) {
    if (nodeCount == 0) {
      return "0/0 nodes are available: no node has registered yet.";
    }
    StringBuilder message = new StringBuilder("0/").append(nodeCount).append(" nodes are available");
    String separator = ": ";
    for (Map.Entry<String, Integer> rejection : rejections.entrySet()) {
      message.append(separator).append(rejection.getValue()).append(' ').append(rejection.getKey());
      separator = ", ";
    }
    return message.append('.').toString();
  }
}
