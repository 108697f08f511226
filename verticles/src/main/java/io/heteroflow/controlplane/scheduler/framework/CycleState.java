package io.heteroflow.controlplane.scheduler.framework;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The data of one task decision, created by the pipeline for each {@code decide} and handed to every extension
 * point: what a PreFilter or PreScore plugin computes for this task (a model pressure, a quota headroom) is kept
 * here, never in a plugin field, so two decisions — successive, or on two threads — never see each other's data.
 * Keys are typed and compared by identity: a plugin declares {@code static final Key<X> MINE = CycleState.key("…")}.
 * Writes belong to the single-threaded points (PreFilter, PreScore, Reserve); Filter and Score only read, and may
 * run on several threads at once (the pipeline scores large candidate sets in parallel, after PreScore).
 */
public final class CycleState {
  /** A typed key; its name is for messages only (two keys with one name are still two keys). */
  public static final class Key<T> {
    private final String name;

    private Key(String name) {
      this.name = name;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  public static <T> Key<T> key(String name) {
    return new Key<>(name);
  }

  /** Allocated on the first write: a decision whose plugins keep nothing allocates nothing more. */
  private Map<Key<?>, Object> values;

  public <T> void write(Key<T> key, T value) {
    if (values == null) {
      values = new IdentityHashMap<>(4);
    }
    values.put(key, value);
  }

  /** The value written under {@code key} in this decision, or null. */
  @SuppressWarnings("unchecked")
  public <T> T read(Key<T> key) {
    return values == null ? null : (T) values.get(key);
  }

  public <T> T readOrDefault(Key<T> key, T fallback) {
    T value = read(key);
    return value == null ? fallback : value;
  }

  public boolean isEmpty() {
    return values == null || values.isEmpty();
  }
}
