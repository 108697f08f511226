package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;

/**
 * The openb trace as a workload with departures (replay mode): each pod arrives at its {@code creation_time}
 * divided by the compression factor and holds what it takes for its real runtime, {@code deletion_time -
 * scheduled_time} (not compressed). Pods without a scheduled time (never started in the trace) or with a runtime
 * of zero or less are left out and counted. The pod list is about the cluster's size (its GPU requests add up to
 * about 98 % of the capacity of {@code default}), so even all at once it cannot make a queue: {@code copies} lays
 * that many copies of it over each other (copy k of pod p is named p#k, arrives with p and runs as long), which
 * multiplies the arrival rate and keeps the trace's pattern. Queues and gangs are assigned by a rule seeded per pod name: each pod
 * falls in one of {@link #QUEUES}' leaves with equal chance (the weights differ, the arrivals do not); a pod of two
 * or more whole GPUs becomes, with chance {@link #GANG_CHANCE}, a gang of 2 or 4 members of its shape, all or
 * nothing (the trace itself has no gangs).
 */
record ReplayWorkload(List<Job> jobs, int withoutScheduledTime, int nonPositiveRuntime, double compress, int copies,
                      long seed) {
  /** The queue tree: a root and four leaves of weight 4, 2, 1, 1. */
  static final Map<String, FairShare.Queue> QUEUES = Map.of(
      "root", new FairShare.Queue("root", null, 1),
      "prod", new FairShare.Queue("prod", "root", 4),
      "research", new FairShare.Queue("research", "root", 2),
      "dev", new FairShare.Queue("dev", "root", 1),
      "batch", new FairShare.Queue("batch", "root", 1));
  static final List<String> LEAVES = List.of("prod", "research", "dev", "batch");
  static final double GANG_CHANCE = 0.5;
  static final int[] GANG_SIZES = {2, 4};

  /**
   * One unit of work: a task (one member) or a gang (several members of one shape, started together); its arrival
   * and runtime in simulated seconds; its GPU demand in milli-GPU over all members.
   */
  record Job(int index, UUID id, String name, String queue, long arrival, int runtime, List<TaskRequest> members,
             long gpuMilli) {
    boolean gang() {
      return members.size() > 1;
    }

    /** The size class waits are reported by: cpu (no GPU), shard (&lt; 1 GPU), 1, 2-4, 8+ GPUs in all. */
    String sizeClass() {
      if (gpuMilli == 0) {
        return "cpu";
      }
      if (gpuMilli < Trace.CARD_UNITS) {
        return "shard";
      }
      long gpus = gpuMilli / Trace.CARD_UNITS;
      return gpus == 1 ? "1" : gpus <= 4 ? "2-4" : "8+";
    }

    /** What it asks for, as fair share counts it: GPU-equivalents (a shard by its share), CPU, memory. */
    FairShare.Amount demand() {
      double cpu = members.stream().mapToDouble(TaskRequest::cpuCores).sum();
      double memory = members.stream().mapToDouble(TaskRequest::memoryMb).sum();
      return new FairShare.Amount(gpuMilli / (double) Trace.CARD_UNITS, cpu, memory);
    }
  }

  static final List<String> SIZE_CLASSES = List.of("cpu", "shard", "1", "2-4", "8+");

  /** The pods of {@code trace} (read from {@code podsCsv}) with their times, as jobs in arrival order. */
  static ReplayWorkload build(Trace trace, Path podsCsv, double compress, int copies, long seed) throws IOException {
    if (!(compress > 0)) {
      throw new IllegalArgumentException("--compress: must be a positive number, got " + compress);
    }
    if (copies < 1) {
      throw new IllegalArgumentException("--load: must be a whole number of at least 1, got " + copies);
    }
    List<String> lines = Files.readAllLines(podsCsv).stream().filter(line -> !line.isBlank()).toList();
    List<String> header = Arrays.stream(lines.get(0).split(",", -1)).map(String::trim).toList();
    for (String column : List.of("name", "creation_time", "deletion_time", "scheduled_time")) {
      if (!header.contains(column)) {
        throw new IllegalArgumentException(podsCsv + " line 1, column " + column + ": missing (the replay needs the"
            + " trace's times)");
      }
    }
    if (lines.size() - 1 != trace.pods().size()) {
      throw new IllegalStateException(podsCsv + ": " + (lines.size() - 1) + " rows, the trace read " + trace.pods().size());
    }
    List<Job> jobs = new ArrayList<>();
    int unscheduled = 0;
    int nonPositive = 0;
    for (int i = 0; i < trace.pods().size(); i++) {
      String[] cells = lines.get(i + 1).split(",", -1);
      String name = cells[header.indexOf("name")].trim();
      String scheduled = cells[header.indexOf("scheduled_time")].trim();
      if (scheduled.isEmpty()) {
        unscheduled++;
        continue;
      }
      long runtime = Long.parseLong(cells[header.indexOf("deletion_time")].trim()) - Long.parseLong(scheduled);
      if (runtime <= 0) {
        nonPositive++;
        continue;
      }
      long arrival = Math.round(Long.parseLong(cells[header.indexOf("creation_time")].trim()) / compress);
      for (int copy = 0; copy < copies; copy++) {
        jobs.add(job(jobs.size(), copy == 0 ? name : name + "#" + copy, trace.pods().get(i), arrival,
            (int) Math.min(Integer.MAX_VALUE, runtime), seed));
      }
    }
    jobs.sort(java.util.Comparator.comparingLong(Job::arrival).thenComparingInt(Job::index));
    List<Job> renumbered = new ArrayList<>();
    for (Job job : jobs) {
      renumbered.add(new Job(renumbered.size(), job.id(), job.name(), job.queue(), job.arrival(), job.runtime(),
          job.members(), job.gpuMilli()));
    }
    return new ReplayWorkload(List.copyOf(renumbered), unscheduled, nonPositive, compress, copies, seed);
  }

  /** The pod's job: its queue and, for a multi-GPU pod, whether it is a gang, drawn from the pod's name and the seed. */
  private static Job job(int index, String name, Trace.Pod pod, long arrival, int runtime, long seed) {
    Random rule = new Random(seed * 1_000_003L + name.hashCode());
    String queue = LEAVES.get(rule.nextInt(LEAVES.size()));
    boolean gang = pod.task().gpuRequired() >= 2 && rule.nextDouble() < GANG_CHANCE;
    int size = gang ? GANG_SIZES[rule.nextInt(GANG_SIZES.length)] : 1;
    List<TaskRequest> members = new ArrayList<>();
    for (int m = 0; m < size; m++) {
      members.add(member(pod.task(), new UUID(seed, (long) index * 8 + m), queue, arrival, runtime));
    }
    return new Job(index, new UUID(~seed, index), name, queue, arrival, runtime, members, pod.gpuMilli() * size);
  }

  /**
   * The pod's request under a deterministic id, with its runtime declared exactly: expected_runtime_seconds and
   * timeout_seconds both its real runtime.
   */
  static TaskRequest member(TaskRequest t, UUID id, String queue, long arrival, int runtime) {
    return new TaskRequest(id, "trace", t.type(), t.priority(), t.gpuRequired(), t.gpuMemoryMb(), t.gpuType(),
        t.gpuModels(), t.cpuCores(), t.memoryMb(), t.nodeSelector(), t.labels(), Instant.ofEpochSecond(arrival),
        runtime, runtime, false);
  }
}
