package io.heteroflow.controlplane.scheduler.plugins.frag;

import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.List;

/**
 * What a task asks of one node, as the fragmentation measure sees it: whole cards, or a slice of one card
 * (in the card's memory units), CPU, memory and the card models it may use.
 */
public record TaskShape(int wholeCards, long sliceUnits, double cpuCores, long memoryMb, List<String> models) {
  public TaskShape {
    models = List.copyOf(models);
  }

  public static TaskShape of(TaskRequest task) {
    return new TaskShape(task.gpuRequired(), task.isShard() ? task.gpuMemoryMb() : 0, task.cpuCores(), task.memoryMb(),
        task.gpuModels());
  }

  boolean usesGpu() {
    return wholeCards > 0 || sliceUnits > 0;
  }
}
