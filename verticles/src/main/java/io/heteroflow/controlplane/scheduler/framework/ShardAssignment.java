package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.protocol.message.Shard;

/**
 * A fractional slice of one card: its memory bound, its compute share, and the QoS level the node's hardware
 * gives (never chosen by the user).
 */
public record ShardAssignment(int cardIndex, long memoryMb, int computePercent, String qos) {

  /** The shard as messages and the task row carry it. */
  public Shard toWire() {
    return new Shard(cardIndex, memoryMb, computePercent, qos);
  }

  /** The shard of a message, or null when it names none. */
  public static ShardAssignment of(Shard shard) {
    return shard == null ? null
        : new ShardAssignment(shard.cardIndex(), shard.memoryMb(), shard.computePercent(), shard.qos());
  }
}
