package io.heteroflow.controlplane.scheduler.framework;

/**
 * A fractional slice of one card: its memory bound, its compute share, and the QoS level the node's hardware
 * gives (never chosen by the user).
 */
public record ShardAssignment(int cardIndex, long memoryMb, int computePercent, String qos) {
}
