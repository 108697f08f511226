package io.heteroflow.agent;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.node.NodeReading;
import java.util.List;
import java.util.Objects;

/**
 * Which of an agent's periodic messages is a full heartbeat and which a liveness-only beat (docs/event-bus.md
 * "Beat"). A full heartbeat goes out until one is applied, after a beat that was not applied or failed, at least
 * every {@link #FULL_EVERY}th time, and whenever the reading changed in a way the scheduler sees: anything but the
 * load, or the load by {@link #DRIFT_PERCENT} points or more (a card's memory in use or utilisation, the host's CPU
 * or memory). Not thread-safe: used on the agent's event loop.
 */
final class HeartbeatCadence {
  /** At 2 s heartbeats: a full one at least every 30 s (load figures are at most that old). */
  static final int FULL_EVERY = 15;
  /** Load changes smaller than this many points (percent of the total) wait for the next full heartbeat. */
  static final int DRIFT_PERCENT = 5;

  private NodeReading applied;
  private boolean fullWanted = true;
  private int beatsSinceFull;

  /** Whether the message composed from {@code reading} is a full heartbeat. */
  boolean full(NodeReading reading) {
    return fullWanted || applied == null || beatsSinceFull + 1 >= FULL_EVERY || changed(applied, reading);
  }

  /** The answer to a full heartbeat ({@code beat} false) or a beat composed from {@code reading}. */
  void answered(boolean beat, boolean wasApplied, NodeReading reading) {
    if (!beat && wasApplied) {
      applied = reading;
      beatsSinceFull = 0;
      fullWanted = false;
    } else if (beat && wasApplied) {
      beatsSinceFull++;
    } else {
      fullWanted = true;
    }
  }

  /** The message was not answered (or refused): the next one is full. */
  void failed() {
    fullWanted = true;
  }

  /** Whether the control plane's view of the node would change by more than drift (static fields compared exactly). */
  static boolean changed(NodeReading before, NodeReading now) {
    if (!Objects.equals(before.vendor(), now.vendor()) || before.cpuCores() != now.cpuCores()
        || before.memoryTotalGb() != now.memoryTotalGb() || !before.internalIps().equals(now.internalIps())
        || !before.publicIps().equals(now.publicIps()) || !before.labels().equals(now.labels())
        || !Objects.equals(before.topology(), now.topology()) || !before.location().equals(now.location())
        || !Objects.equals(before.dedicatedTenant(), now.dedicatedTenant())
        || before.cards().size() != now.cards().size()) {
      return true;
    }
    if (drifted(before.cpuPercent(), now.cpuPercent(), 100)
        || drifted(before.memoryUsedMb(), now.memoryUsedMb(), now.memoryTotalGb() * 1024)) {
      return true;
    }
    List<DetectedCard> was = before.cards();
    List<DetectedCard> is = now.cards();
    for (int i = 0; i < is.size(); i++) {
      DetectedCard a = was.get(i);
      DetectedCard b = is.get(i);
      if (a.index() != b.index() || !Objects.equals(a.uuid(), b.uuid()) || !Objects.equals(a.model(), b.model())
          || a.memoryTotalMb() != b.memoryTotalMb() || !Objects.equals(a.numaNode(), b.numaNode())
          || drifted(a.memoryUsedMb(), b.memoryUsedMb(), b.memoryTotalMb())
          || drifted(a.utilizationPercent(), b.utilizationPercent(), 100)) {
        return true;
      }
    }
    return false;
  }

  /** Whether a figure moved by {@link #DRIFT_PERCENT} points of {@code total} or more (any move when total is 0). */
  private static boolean drifted(double before, double now, double total) {
    return total <= 0 ? before != now : Math.abs(now - before) * 100 >= DRIFT_PERCENT * total;
  }
}
