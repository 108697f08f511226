package io.heteroflow.bench;

import io.heteroflow.controlplane.store.TaskSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The benchmark's burst: a seeded mix of whole-card tasks (1, 2, 4, 8 cards) and fractional tasks
 * ({@code gpu_memory_mb} without {@code gpu_required}). The big tasks carry a higher priority, so the queue
 * (priority, then FIFO) places them first while whole nodes are still free, as an operator would configure
 * gangs; the mix asks for about 0.97 cards per task on average (see {@link #CARDS_PER_TASK}).
 *
 * <pre>
 *   share  kind           priority  cpu cores  memory
 *    1 %   8 cards        70        32         256 GiB
 *    3 %   4 cards        60        16         128 GiB
 *   10 %   2 cards        55         8          64 GiB
 *   50 %   1 card         50         4          32 GiB
 *   36 %   fractional     50         2          16 GiB   (8, 12, 16 or 24 GiB of one card)
 * </pre>
 */
final class TaskMix {
  /** Expected whole cards per task (0.08 + 0.12 + 0.20 + 0.50), plus about 0.07 card of shards. */
  static final double CARDS_PER_TASK = 0.97;
  static final String NAME = "bench";
  private static final long[] SHARD_MB = {8192, 12288, 16384, 24576};

  private TaskMix() {}

  /** One task of the burst: its spec and nothing else (tenant "default", no idempotency key). */
  record Task(TaskSpec spec) {
    String kind() {
      return spec.gpuRequired() > 0 ? spec.gpuRequired() + "-card" : "fractional";
    }
  }

  static List<Task> generate(int count, long seed) {
    return generate(NAME, count, seed);
  }

  static List<Task> generate(String name, int count, long seed) {
    return generate(name, count, seed, 8);
  }

  /**
   * The mix with whole-card tasks capped at {@code maxCards}: tasks arriving one by one (no priority ordering
   * of a burst) are spread over every node by the default spread score, so no whole node stays free for an
   * 8-card gang and it would wait forever; the half-load phase measures latency, not fragmentation.
   */
  static List<Task> generate(String name, int count, long seed, int maxCards) {
    Random random = new Random(seed);
    List<Task> tasks = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int roll = random.nextInt(100);
      if (roll < 1) {
        tasks.add(whole(name, Math.min(8, maxCards), 70, "training"));
      } else if (roll < 4) {
        tasks.add(whole(name, Math.min(4, maxCards), 60, "training"));
      } else if (roll < 14) {
        tasks.add(whole(name, 2, 55, "job"));
      } else if (roll < 64) {
        tasks.add(whole(name, 1, 50, "job"));
      } else {
        tasks.add(new Task(spec(name, "job", 50, 0, SHARD_MB[random.nextInt(SHARD_MB.length)], 2, 16384, Map.of())));
      }
    }
    return tasks;
  }

  private static Task whole(String name, int cards, int priority, String type) {
    return new Task(spec(name, type, priority, cards, 0, 4.0 * cards, 32768L * cards, Map.of()));
  }

  static TaskSpec spec(String name, String type, int priority, int cards, long gpuMemoryMb, double cpuCores,
                       long memoryMb, Map<String, String> nodeSelector) {
    return new TaskSpec(name, type, null, List.of("sleep", "60"), Map.of(), priority, false, cards, gpuMemoryMb,
        null, List.of(), cpuCores, memoryMb, TaskSpec.DEFAULT_TIMEOUT_SECONDS,
        TaskSpec.DEFAULT_TERMINATION_GRACE_SECONDS, null, nodeSelector, Map.of());
  }
}
