package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The backlog-recovery beat (SPEC §2, leader only): active tasks on a node that has been offline past the grace
 * period are settled by CAS — {@code scheduled} back to {@code pending} (it never started), {@code stopping} to
 * {@code stopped}, {@code running} to {@code failed} with reason {@code NodeLost} — through the same transition
 * as an agent's report (cards and shards released, ledger entry, event), and a round is kicked so nothing waits
 * for the next tick. A {@code preempting} task is left to the preempt watchdog, which forces it within its
 * allowance whatever its node does: one settler per arc. (Running tasks a restarted agent no longer reports are
 * settled by the heartbeats: NodeRegistryVerticle.)
 */
public final class RecoveryVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(RecoveryVerticle.class.getName());
  private final TaskStore tasks;
  private final Leadership leadership;
  private final long periodMs;
  private final int offlineGraceSeconds;
  private TaskStops stops;

  public RecoveryVerticle(TaskStore tasks, Leadership leadership, long periodMs, int offlineGraceSeconds) {
    this.tasks = tasks;
    this.leadership = leadership;
    this.periodMs = periodMs;
    this.offlineGraceSeconds = offlineGraceSeconds;
  }

  @Override
  public Future<?> start() {
    stops = new TaskStops(vertx, tasks);
    vertx.setPeriodic(periodMs, id -> {
      if (leadership.leading()) {
        recover().onFailure(e -> LOG.log(Level.FINE, "backlog recovery failed", e));
      }
    });
    return Future.succeededFuture();
  }

  Future<Integer> recover() {
    return tasks.stranded(offlineGraceSeconds).compose(stranded -> {
      List<Future<Boolean>> settled = new ArrayList<>();
      stranded.forEach((id, status) -> settled.add(settle(id, status)));
      return Future.join(settled).map(all -> {
        int count = (int) settled.stream().filter(f -> f.succeeded() && f.result()).count();
        if (count > 0) {
          LOG.info("backlog recovery settled " + count + " task(s) stranded on offline nodes");
          vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("recovered").toJson());
        }
        return count;
      });
    });
  }

  private Future<Boolean> settle(UUID id, TaskStatus status) {
    return stops.settleLost(id, status, status == TaskStatus.RUNNING
        ? "its node stayed offline past the grace period while it ran: the task is lost"
        : "its node went offline before the agent confirmed");
  }
}
