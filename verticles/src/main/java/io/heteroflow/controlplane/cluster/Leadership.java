package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.store.LeaderStore;
import java.util.UUID;

/**
 * This control plane's view of leadership: its member id, and the fence (member + term) while it leads.
 * Only {@link LeadershipVerticle} makes it lead ({@link #become}); it stops leading when that verticle steps
 * down, or at once when a bind finds its term fenced (BindDispatcher calls {@link #stepDown}). The leader-only
 * work (scheduling rounds, the registry's sweeps, backlog recovery) runs only while {@link #leading}; the binds
 * also carry the fence, so PostgreSQL refuses the binds of a term that has passed.
 */
public final class Leadership {
  private final String memberId;
  private volatile LeaderStore.Fence fence;

  public Leadership(String memberId) {
    this.memberId = memberId;
  }

  public static Leadership newMember(String host) {
    return new Leadership(host + "/" + UUID.randomUUID().toString().substring(0, 8));
  }

  public String memberId() {
    return memberId;
  }

  /** The fence while leading, else null. */
  public LeaderStore.Fence fence() {
    return fence;
  }

  public boolean leading() {
    return fence != null;
  }

  void become(long term) {
    fence = new LeaderStore.Fence(memberId, term);
  }

  /** Stops leading at once (the verticle also releases the cluster lock on its next beat). */
  public void stepDown() {
    fence = null;
  }
}
