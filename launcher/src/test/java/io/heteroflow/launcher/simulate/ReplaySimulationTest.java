package io.heteroflow.launcher.simulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay with departures on tiny hand-checked traces: blocking, backfill around a reservation, gangs whole. */
class ReplaySimulationTest {
  @TempDir
  Path dir;

  private ReplayWorkload workload(String nodes, String pods, int copies) throws Exception {
    Path nodeFile = Files.writeString(dir.resolve("nodes.csv"), "sn,cpu_milli,memory_mib,gpu,model\n" + nodes);
    Path podFile = Files.writeString(dir.resolve("openb_pod_list_tiny.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
            + "scheduled_time\n" + pods);
    trace = Trace.read(nodeFile, podFile);
    return ReplayWorkload.build(trace, podFile, 1, copies, 42);
  }

  private Trace trace;

  private Map<String, Long> waits(ReplaySimulation.Run run) {
    Map<String, Long> byName = new HashMap<>();
    run.workload().jobs().forEach(job -> byName.put(job.name(), run.waits()[job.index()]));
    return byName;
  }

  /** Whatever queue the seeded rule draws, every job is in one: force them all into one queue for these cases. */
  private ReplayWorkload oneQueue(ReplayWorkload workload) {
    return new ReplayWorkload(workload.jobs().stream().map(job -> new ReplayWorkload.Job(job.index(), job.id(),
        job.name(), "prod", job.arrival(), job.runtime(), job.members(), job.gpuMilli())).toList(),
        workload.withoutScheduledTime(), workload.nonPositiveRuntime(), workload.compress(), workload.copies(),
        workload.seed());
  }

  @Test
  void fifoBlocksBehindABigHeadAndBackfillStartsOnlyWhatEndsBeforeItsReservation() throws Exception {
    // one node of 2 GPUs. a holds one GPU until 100; big (2 GPUs) must wait for it; small (1 GPU, 30 s) arrives at
    // 20 and ends at 50, before big's reservation at 100; long (1 GPU, 1000 s) arrives at 60 and would delay big
    ReplayWorkload workload = oneQueue(workload("n,8000,16384,2,T4\n",
        "a,1000,1024,1,1000,,LS,Running,0,100,0\n"
            + "big,1000,1024,2,1000,,LS,Running,10,60,10\n"
            + "small,1000,1024,1,1000,,LS,Running,20,50,20\n"
            + "long,1000,1024,1,1000,,LS,Running,60,1060,60\n"
            + "never,1000,1024,1,1000,,LS,Pending,5,,\n", 1));
    assertEquals(4, workload.jobs().size());
    assertEquals(1, workload.withoutScheduledTime());
    Map<String, Long> fifo = waits(ReplaySimulation.run(trace, workload, "fifo", "binpack"));
    assertEquals(Map.of("a", 0L, "big", 90L, "small", 130L, "long", 90L), fifo, "strict FIFO: small waits behind big");
    Map<String, Long> fair = waits(ReplaySimulation.run(trace, workload, "fair", "binpack"));
    assertEquals(fifo, fair, "one queue: fair is FIFO");
    Map<String, Long> greedy = waits(ReplaySimulation.run(trace, workload, "greedy", "binpack"));
    assertEquals(0L, greedy.get("small"));
    assertEquals(0L, greedy.get("long"), "greedy lets long jump big");
    assertTrue(greedy.get("big") > 90L, "and big waits for long: " + greedy);
    ReplaySimulation.Run backfill = ReplaySimulation.run(trace, workload, "backfill", "binpack");
    assertEquals(Map.of("a", 0L, "big", 90L, "small", 0L, "long", 90L), waits(backfill),
        "backfill starts small, which ends before big's reservation, and holds long back");
    assertEquals(0, ReplayReport.neverStarted(backfill));
  }

  @Test
  void aGangStartsWholeOrNotAtAllAndEveryJobThatDepartsHadStarted() throws Exception {
    // two nodes of 8 GPUs; g8 (8 GPUs, drawn a gang by the seeded rule for some copies) and 1-GPU fillers
    StringBuilder pods = new StringBuilder();
    for (int i = 0; i < 6; i++) {
      pods.append("g").append(i).append(",1000,1024,8,1000,,LS,Running,").append(i * 10).append(',')
          .append(i * 10 + 500).append(',').append(i * 10).append('\n');
      pods.append("f").append(i).append(",1000,1024,1,1000,,LS,Running,").append(i * 10 + 5).append(',')
          .append(i * 10 + 305).append(',').append(i * 10 + 5).append('\n');
    }
    ReplayWorkload workload = workload("n1,64000,262144,8,V100\nn2,64000,262144,8,V100\n", pods.toString(), 2);
    assertTrue(workload.jobs().stream().anyMatch(ReplayWorkload.Job::gang), "the seeded rule made some gangs");
    for (String policy : ReplayRound.POLICIES) {
      ReplaySimulation.Run run = ReplaySimulation.run(trace, workload, policy, "binpack");
      assertEquals(0, run.partialGangs(), policy);
      for (ReplayWorkload.Job job : workload.jobs()) {
        boolean fits = !(job.gang() && job.members().size() * job.members().get(0).gpuRequired() > 16);
        assertEquals(fits, run.waits()[job.index()] >= 0, policy + " " + job.name() + " started iff it fits");
        assertEquals(!fits, run.unplaceable()[job.index()], policy + " " + job.name());
      }
      assertEquals(0, ReplayReport.neverStarted(run), policy);
    }
  }
}
