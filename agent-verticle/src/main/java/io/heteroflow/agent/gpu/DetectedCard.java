package io.heteroflow.agent.gpu;

/**
 * One card as a vendor tool reported it. {@code index} is the index the vendor's visibility variable uses;
 * values a tool does not report are 0 (numbers) or null ({@code uuid}, {@code numaNode}).
 */
public record DetectedCard(int index, String uuid, String model, long memoryTotalMb, long memoryUsedMb,
                           int utilizationPercent, int temperatureC, Integer numaNode) {
}
