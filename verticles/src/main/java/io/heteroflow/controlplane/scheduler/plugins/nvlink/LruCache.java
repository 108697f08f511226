package io.heteroflow.controlplane.scheduler.plugins.nvlink;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A cache of at most {@code capacity} entries that drops the least recently used one when full; thread-safe
 * (one lock: the entries are cheap to look up, and a miss computes outside no other lock). A null value is not
 * cached.
 */
final class LruCache<K, V> {
  private final Map<K, V> entries;

  LruCache(int capacity) {
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > capacity;
      }
    };
  }

  synchronized V computeIfAbsent(K key, Function<K, V> compute) {
    return entries.computeIfAbsent(key, compute);
  }

  synchronized int size() {
    return entries.size();
  }

  synchronized boolean contains(K key) {
    return entries.containsKey(key);
  }
}
