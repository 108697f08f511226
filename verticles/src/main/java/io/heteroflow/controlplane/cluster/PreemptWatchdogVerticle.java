package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.TaskStatus;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The preempt watchdog (SPEC §6, leader only, every 30 s): a task {@code preempting} for more than 60 s (plus
 * its declared checkpoint timeout and any termination grace above the default 10 s, which its stop may take),
 * whose agent has not confirmed the stop, is forced back to {@code pending} through the same CAS as the agent's report
 * (cards and shards released, {@code preempt_count + 1}, {@code preemptible = false}, ledger entry, event). Both
 * go through one CAS from {@code preempting}, so whichever comes second finds the task no longer preempting and
 * changes nothing: the settlement never runs twice. The 60 s are a setting ({@code --preempt-timeout-seconds},
 * {@code ControlPlane.Options.withPreemptTimeoutSeconds}), and the watchdog then looks every half of it.
 */
public final class PreemptWatchdogVerticle extends VerticleBase {
  /** How often the watchdog looks (SPEC §2). */
  public static final long PERIOD_MS = 30_000;
  /** How long an agent has to confirm a preemption before the watchdog forces it (SPEC §6). */
  public static final int TIMEOUT_SECONDS = 60;
  /** The largest timeout an operator may set (a day). */
  public static final int MAX_TIMEOUT_SECONDS = 86_400;
  private static final Logger LOG = Logger.getLogger(PreemptWatchdogVerticle.class.getName());
  private final TaskStore tasks;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final long periodMs;
  private final int timeoutSeconds;

  public PreemptWatchdogVerticle(TaskStore tasks, Leadership leadership, ControlPlaneMetrics metrics, long periodMs,
                                 int timeoutSeconds) {
    this.tasks = tasks;
    this.leadership = leadership;
    this.metrics = metrics;
    this.periodMs = periodMs;
    this.timeoutSeconds = timeoutSeconds;
  }

  /**
   * The check period for a force timeout: half of it, at least a second ({@link #PERIOD_MS} for the default
   * {@link #TIMEOUT_SECONDS}), so a preemption is forced between one and one and a half timeouts after it began.
   */
  public static long periodMs(int timeoutSeconds) {
    return Math.max(1000, timeoutSeconds * 500L);
  }

  /** A timeout an operator may set: 1 to {@link #MAX_TIMEOUT_SECONDS} seconds; anything else names {@code option}. */
  public static int checkTimeout(String option, int seconds) {
    if (seconds < 1 || seconds > MAX_TIMEOUT_SECONDS) {
      throw new IllegalArgumentException(option + " must be between 1 and " + MAX_TIMEOUT_SECONDS
          + " seconds, was " + seconds);
    }
    return seconds;
  }

  @Override
  public Future<?> start() {
    vertx.setPeriodic(periodMs, id -> {
      if (leadership.leading()) {
        sweep().onFailure(e -> LOG.log(Level.FINE, "preempt watchdog sweep failed", e));
      }
    });
    return Future.succeededFuture();
  }

  /** Forces every overdue preemption; answers how many this sweep settled (a lost CAS is not counted). */
  public Future<Integer> sweep() {
    return tasks.overduePreemptions(timeoutSeconds).compose(overdue -> {
      List<Future<Boolean>> forced = new ArrayList<>();
      for (TaskStore.OverduePreemption task : overdue) {
        forced.add(tasks.transition(task.id(), TaskStatus.PREEMPTING, TaskStatus.PENDING,
            new TaskStore.Details(null, null, "PreemptionForced", "the agent of node " + task.nodeId()
                + " did not confirm the preemption within " + timeoutSeconds + " s (plus the task's checkpoint"
                + " and extra grace): settled by the preempt watchdog, back in the queue")));
      }
      return Future.join(forced).transform(done -> {
        int count = 0;
        for (int i = 0; i < forced.size(); i++) {
          if (forced.get(i).succeeded() && forced.get(i).result()) {
            count++;
            metrics.preemptingFor(Duration.between(overdue.get(i).since().toInstant(), Instant.now()));
          }
        }
        if (count > 0) {
          metrics.preemptions("forced_by_watchdog", count);
          LOG.warning("preempt watchdog forced " + count + " preemption(s) no agent confirmed in "
              + timeoutSeconds + " s");
          vertx.eventBus().publish(BusAddresses.SCHEDULER_KICK, Kick.because("preemptions forced").toJson());
        }
        return Future.succeededFuture(count);
      });
    });
  }
}
