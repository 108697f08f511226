package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.store.LeaderStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.LeadershipChange;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.shareddata.Lock;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Elects and keeps the leader (SPEC §1): a Hazelcast cluster lock picks the candidate (it avoids wasted work
 * but gives no fencing), then the candidate takes a term in PostgreSQL with a lease on database time and
 * renews it every beat. A leader that cannot renew within its lease, or finds its term taken, steps down by
 * itself; its writes were fenced by the term anyway. Lock waits are asynchronous, never on an event loop.
 */
public final class LeadershipVerticle extends VerticleBase {
  public static final String LOCK = "heteroflow.leader";
  private static final Logger LOG = Logger.getLogger(LeadershipVerticle.class.getName());

  private final Leadership leadership;
  private final LeaderStore store;
  private final String host;
  private final int httpPort;
  private final int leaseSeconds;
  private final long beatMs;
  private Lock lock;
  private long lastRenewedAt;
  private boolean busy;

  public LeadershipVerticle(Leadership leadership, LeaderStore store, String host, int httpPort, int leaseSeconds,
                            long beatMs) {
    this.leadership = leadership;
    this.store = store;
    this.host = host;
    this.httpPort = httpPort;
    this.leaseSeconds = leaseSeconds;
    this.beatMs = beatMs;
  }

  @Override
  public Future<?> start() {
    vertx.setPeriodic(0, beatMs, id -> beat());
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    LeaderStore.Fence fence = leadership.fence();
    leadership.stepDown();
    releaseLock();
    return fence == null ? Future.succeededFuture() : store.resign(fence.member(), fence.term()).recover(e -> Future.succeededFuture());
  }

  private void beat() {
    store.seen(leadership.memberId(), host, httpPort).onFailure(e -> LOG.log(Level.FINE, "member register", e));
    if (busy) {
      return;
    }
    busy = true;
    Future<Void> work = leadership.leading() ? renew() : campaign();
    work.onComplete(done -> busy = false);
  }

  private Future<Void> renew() {
    LeaderStore.Fence fence = leadership.fence();
    return store.renew(fence.member(), fence.term(), leaseSeconds)
        .map(renewed -> {
          if (renewed.isPresent()) {
            lastRenewedAt = System.nanoTime();
          } else {
            stepDown("term " + fence.term() + " is no longer current");
          }
          return (Void) null;
        })
        .recover(e -> {
          if (System.nanoTime() - lastRenewedAt > leaseSeconds * 1_000_000_000L) {
            stepDown("could not renew the lease for " + leaseSeconds + " s: " + e.getMessage());
          }
          return Future.succeededFuture();
        });
  }

  private Future<Void> campaign() {
    releaseLock();
    return vertx.sharedData().getLockWithTimeout(LOCK, Math.max(50, beatMs / 4))
        .compose(acquired -> {
          lock = acquired;
          return store.elect(leadership.memberId(), leaseSeconds);
        })
        .map(term -> {
          if (term.isPresent()) {
            lastRenewedAt = System.nanoTime();
            leadership.become(term.get());
            LOG.info("member " + leadership.memberId() + " leads with term " + term.get());
            vertx.eventBus().publish(BusAddresses.LEADERSHIP_CHANGED,
                new LeadershipChange(leadership.memberId(), term.get()).toJson());
          } else {
            releaseLock();
          }
          return (Void) null;
        })
        .recover(notNow -> Future.succeededFuture());
  }

  private void stepDown(String why) {
    if (leadership.leading()) {
      LOG.warning("member " + leadership.memberId() + " steps down: " + why);
    }
    leadership.stepDown();
    releaseLock();
  }

  private void releaseLock() {
    if (lock != null) {
      lock.release();
      lock = null;
    }
  }
}
