package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFutures.await;
import static io.heteroflow.bench.BenchFutures.forEachLimited;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.controlplane.store.TaskStore;
import io.heteroflow.protocol.TaskStatus;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The benchmark's tasks as rows: inserted in 1,000-row statements (one transaction each, with the same
 * "created" event TaskStore.create writes), and released through TaskStore when a phase is done with them.
 */
final class TaskRows {
  private static final int INSERT_CHUNK = 1000;

  private TaskRows() {}

  /** The burst in statements of 1,000 rows, one transaction each (tasks and their "created" events). */
  static List<UUID> insert(Pool client, List<TaskMix.Task> tasks) throws Exception {
    List<UUID> all = new ArrayList<>(tasks.size());
    for (int from = 0; from < tasks.size(); from += INSERT_CHUNK) {
      List<TaskMix.Task> chunk = tasks.subList(from, Math.min(tasks.size(), from + INSERT_CHUNK));
      int n = chunk.size();
      UUID[] ids = new UUID[n];
      String[] names = new String[n];
      String[] types = new String[n];
      Integer[] priorities = new Integer[n];
      Integer[] gpus = new Integer[n];
      Long[] gpuMemory = new Long[n];
      String[] specs = new String[n];
      Double[] cpus = new Double[n];
      Long[] memory = new Long[n];
      Boolean[] preemptible = new Boolean[n];
      for (int i = 0; i < n; i++) {
        TaskSpec spec = chunk.get(i).spec();
        ids[i] = UUID.randomUUID();
        all.add(ids[i]);
        names[i] = spec.name();
        types[i] = spec.type();
        priorities[i] = spec.priority();
        gpus[i] = spec.gpuRequired();
        gpuMemory[i] = spec.gpuMemoryMb();
        specs[i] = spec.toSpecJson().encode();
        cpus[i] = spec.cpuCores();
        memory[i] = spec.memoryMb();
        preemptible[i] = spec.preemptible();
      }
      await(client.preparedQuery(BenchSql.INSERT_TASKS).execute(Tuple.tuple().addArrayOfUUID(ids).addArrayOfString(names)
          .addArrayOfString(types).addArrayOfInteger(priorities).addArrayOfInteger(gpus).addArrayOfLong(gpuMemory)
          .addArrayOfString(specs).addArrayOfDouble(cpus).addArrayOfLong(memory).addArrayOfBoolean(preemptible)));
    }
    return all;
  }

  /** Fails every pending or scheduled task named {@code name} (scheduled ones return their cards). */
  static void release(ControlPlane.Running controlPlane, Pool client, String name) throws Exception {
    List<UUID> scheduled = new ArrayList<>();
    List<UUID> pending = new ArrayList<>();
    await(client.preparedQuery(BenchSql.UNRELEASED_TASKS).execute(Tuple.of(name))).forEach(row ->
        (row.getString("status").equals("scheduled") ? scheduled : pending).add(row.getUUID("id")));
    TaskStore.Details released = new TaskStore.Details(null, null, "BenchRelease", "released by the benchmark");
    await(forEachLimited(scheduled, 16,
        id -> controlPlane.stores().tasks().transition(id, TaskStatus.SCHEDULED, TaskStatus.FAILED, released)));
    await(forEachLimited(pending, 16,
        id -> controlPlane.stores().tasks().transition(id, TaskStatus.PENDING, TaskStatus.FAILED, released)));
  }
}
