package io.heteroflow.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the benchmark reads about the machine: this JVM's CPU time and peak RSS (/proc/self), the CPU time of
 * every local {@code postgres} process (the embedded server runs outside the JVM), the machine's busy time
 * (/proc/stat), and CPU time per JVM thread group (event loops, workers, the common pool of parallel scoring).
 */
final class ProcessStats {
  private static final double CLOCK_TICKS = 100.0; // USER_HZ: 100 on every Linux we run on (getconf CLK_TCK)

  private ProcessStats() {}

  /** A reading at one instant. */
  record Reading(long nanoTime, double jvmCpuSeconds, double postgresCpuSeconds, long machineBusyTicks,
                 long machineTotalTicks, Map<String, Double> threadCpuSeconds, long gcMillis, long gcCount,
                 long jitMillis) {

    /** CPU seconds the whole machine was busy between {@code before} and this reading (all cores). */
    double machineBusySecondsSince(Reading before) {
      return (machineBusyTicks - before.machineBusyTicks) / CLOCK_TICKS;
    }

    /** CPU seconds per thread group between {@code before} and this reading, largest first. */
    Map<String, Double> threadsSince(Reading before) {
      Map<String, Double> delta = new HashMap<>();
      threadCpuSeconds.forEach((group, seconds) -> {
        double spent = seconds - before.threadCpuSeconds.getOrDefault(group, 0.0);
        if (spent > 0.005) {
          delta.put(group, spent);
        }
      });
      Map<String, Double> sorted = new LinkedHashMap<>();
      delta.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
          .forEach(entry -> sorted.put(entry.getKey(), entry.getValue()));
      return sorted;
    }

    /** The machine's busy share (all cores) between {@code before} and this reading, 0..1. */
    double machineBusySince(Reading before) {
      long total = machineTotalTicks - before.machineTotalTicks;
      return total <= 0 ? Double.NaN : (double) (machineBusyTicks - before.machineBusyTicks) / total;
    }
  }

  static Reading read(long postmaster) {
    long[] machine = machineTicks();
    long gcMillis = 0;
    long gcCount = 0;
    for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      gcMillis += Math.max(0, gc.getCollectionTime());
      gcCount += Math.max(0, gc.getCollectionCount());
    }
    java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    long jitMillis = jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    return new Reading(System.nanoTime(), jvmCpuSeconds(), postgresCpuSeconds(postmaster), machine[0], machine[1],
        threadCpuByGroup(), gcMillis, gcCount, jitMillis);
  }

  /** Process CPU time of this JVM (user + system, all threads, GC and JIT included). */
  static double jvmCpuSeconds() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime() / 1e9;
    }
    long[] ticks = statTicks(Path.of("/proc/self/stat"));
    return ticks == null ? Double.NaN : (ticks[0] + ticks[1]) / CLOCK_TICKS;
  }

  /** VmHWM (peak resident set) of this JVM in MiB, or NaN off Linux. */
  static double peakRssMb() {
    return statusKb("VmHWM") / 1024.0;
  }

  /**
   * Resets VmHWM to the current RSS (Linux: writing 5 to /proc/self/clear_refs), so each scenario reports its
   * own peak; answers whether the kernel accepted it.
   */
  static boolean resetPeakRss() {
    try {
      Files.writeString(Path.of("/proc/self/clear_refs"), "5");
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  private static double statusKb(String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith(field + ":")) {
          return Double.parseDouble(line.substring(field.length() + 1).trim().split("\\s+")[0]);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return Double.NaN;
  }

  /**
   * The postmaster of the PostgreSQL server a backend runs in: the parent of {@code backendPid}
   * ({@code SELECT pg_backend_pid()}), or -1 when that process is not on this machine (a remote server).
   */
  static long postmasterOf(long backendPid) {
    String[] fields = statFields(Path.of("/proc", String.valueOf(backendPid), "stat"));
    return fields == null ? -1 : Long.parseLong(fields[1]);
  }

  /**
   * User + system CPU seconds of one PostgreSQL server: the postmaster (with its reaped children) and its live
   * children (backends, WAL writer, checkpointer, autovacuum); NaN when the server is not on this machine.
   */
  static double postgresCpuSeconds(long postmaster) {
    if (postmaster <= 0) {
      return Double.NaN;
    }
    String[] server = statFields(Path.of("/proc", String.valueOf(postmaster), "stat"));
    if (server == null) {
      return Double.NaN;
    }
    // fields after "(comm) ": [0] state, [1] ppid, ... [11] utime, [12] stime, [13] cutime, [14] cstime
    long ticks = Long.parseLong(server[11]) + Long.parseLong(server[12]) + Long.parseLong(server[13])
        + Long.parseLong(server[14]);
    String parent = String.valueOf(postmaster);
    try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path process : processes) {
        String[] fields = statFields(process.resolve("stat"));
        if (fields != null && fields[1].equals(parent)) {
          ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        }
      }
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
    return ticks / CLOCK_TICKS;
  }

  private static long[] statTicks(Path stat) {
    String[] fields = statFields(stat);
    return fields == null ? null : new long[] {Long.parseLong(fields[11]), Long.parseLong(fields[12])};
  }

  /** The fields of /proc/PID/stat after "pid (comm) ", or null. */
  private static String[] statFields(Path stat) {
    try {
      String line = Files.readString(stat);
      return line.substring(line.lastIndexOf(')') + 2).split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Busy and total ticks of all CPUs from the first line of /proc/stat. */
  private static long[] machineTicks() {
    try {
      String[] fields = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      long idle = 0;
      for (int i = 1; i < fields.length && i <= 8; i++) {
        long value = Long.parseLong(fields[i]);
        total += value;
        if (i == 4 || i == 5) { // idle, iowait
          idle += value;
        }
      }
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return new long[] {0, 0};
    }
  }

  /** CPU seconds per thread group: the thread name with its trailing number removed. */
  private static Map<String, Double> threadCpuByGroup() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    Map<String, Double> groups = new HashMap<>();
    if (!threads.isThreadCpuTimeSupported()) {
      return groups;
    }
    long[] ids = threads.getAllThreadIds();
    ThreadInfo[] infos = threads.getThreadInfo(ids);
    for (int i = 0; i < ids.length; i++) {
      if (infos[i] == null) {
        continue;
      }
      long cpu = threads.getThreadCpuTime(ids[i]);
      if (cpu > 0) {
        groups.merge(group(infos[i].getThreadName()), cpu / 1e9, Double::sum);
      }
    }
    return groups;
  }

  static String group(String threadName) {
    return threadName.replaceAll("[-#]?\\d+$", "").replaceAll("worker-\\d+", "worker");
  }

  /** The number of processors this JVM sees. */
  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  static List<String> describeMachine() {
    return List.of(cores() + " cores", Runtime.version().toString(),
        Math.round(Runtime.getRuntime().maxMemory() / 1048576.0) + " MiB max heap");
  }
}
