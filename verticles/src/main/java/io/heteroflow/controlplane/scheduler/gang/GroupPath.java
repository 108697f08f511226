package io.heteroflow.controlplane.scheduler.gang;

import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.List;
import java.util.Map;

/**
 * The five ways a group is placed (SPEC §9), derived from its members and its optional {@code parallelism} hint:
 * <ul>
 *   <li>{@link #TENSOR_PARALLEL}: hint {@code tensor}, or every multi-card member labelled {@code nvlink: required};
 *       each member's cards lie in one NVLink domain (the nvlink filter is applied to every member);</li>
 *   <li>{@link #PIPELINE_PARALLEL}: hint {@code pipeline}; stage i is rank i, and each stage is placed as close as
 *       possible to the stage before it (same node, same rack, same zone);</li>
 *   <li>{@link #DATA_PARALLEL}: hint {@code data}, or identical members; ranks follow the placement's topology
 *       (rank 0 first, neighbours next to each other);</li>
 *   <li>{@link #GREEDY_BY_CARDS}: members that differ only in card count; the largest are placed first;</li>
 *   <li>{@link #CO_SCHEDULING}: members of different shapes (types, models, memory, CPU); largest first.</li>
 * </ul>
 * Every path filters strictly by a gpu_type all members share and never falls back to another vendor.
 */
public enum GroupPath {
  TENSOR_PARALLEL, PIPELINE_PARALLEL, DATA_PARALLEL, GREEDY_BY_CARDS, CO_SCHEDULING;

  public static GroupPath of(String parallelism, List<TaskRequest> members) {
    if ("pipeline".equals(parallelism)) {
      return PIPELINE_PARALLEL;
    }
    List<TaskRequest> multiCard = members.stream().filter(member -> member.gpuRequired() > 1).toList();
    if ("tensor".equals(parallelism) || (!multiCard.isEmpty()
        && multiCard.stream().allMatch(member -> "required".equalsIgnoreCase(member.label("nvlink"))))) {
      return TENSOR_PARALLEL;
    }
    TaskRequest first = members.get(0).shape();
    if ("data".equals(parallelism) || members.stream().allMatch(member -> member.shape().equals(first))) {
      return DATA_PARALLEL;
    }
    TaskRequest oneCard = withCards(first, 1);
    return members.stream().allMatch(member -> withCards(member.shape(), 1).equals(oneCard))
        ? GREEDY_BY_CARDS : CO_SCHEDULING;
  }

  /** The member as this path judges it: on the tensor path every multi-card member needs one NVLink domain. */
  TaskRequest judged(TaskRequest member, String gpuType) {
    Map<String, String> labels = member.labels();
    if (this == TENSOR_PARALLEL && member.gpuRequired() > 1 && !"required".equalsIgnoreCase(member.label("nvlink"))) {
      labels = new java.util.HashMap<>(labels);
      labels.put("nvlink", "required");
    }
    String type = gpuType != null && member.gpuType() == null && usesCards(member) ? gpuType : member.gpuType();
    return new TaskRequest(member.id(), member.tenant(), member.type(), member.priority(), member.gpuRequired(),
        member.gpuMemoryMb(), type, member.gpuModels(), member.cpuCores(), member.memoryMb(), member.nodeSelector(),
        labels, member.queuedSince(), member.runtimeSeconds(), member.timeoutSeconds(),
        member.preemptible());
  }

  static boolean usesCards(TaskRequest member) {
    return member.gpuRequired() > 0 || member.isShard();
  }

  private static TaskRequest withCards(TaskRequest shape, int cards) {
    return new TaskRequest(shape.id(), shape.tenant(), shape.type(), shape.priority(), cards, shape.gpuMemoryMb(),
        shape.gpuType(), shape.gpuModels(), shape.cpuCores(), shape.memoryMb(), shape.nodeSelector(), shape.labels(),
        null, shape.runtimeSeconds(), shape.timeoutSeconds(),
        shape.preemptible());
  }
}
