package io.heteroflow.agent;

import io.heteroflow.agent.node.NodeReading;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.message.Run;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The torch.distributed variables of a run ({@code env://} rendezvous and torchrun's node-level view): where
 * rank 0 listens, the world, this task's place in it, how many local processes its cards allow, and the
 * backend to initialise. A single task is a world of one on its own node; a group member takes its place from
 * the Run's {@link Run.Distributed} (one member task per rank, so NNODES is the world size). Every name is
 * reserved by {@link io.heteroflow.protocol.TaskEnvironment}: a task cannot set them itself.
 */
public final class DistributedEnvironment {
  public static final String MASTER_ADDR = "MASTER_ADDR";
  public static final String MASTER_PORT = "MASTER_PORT";
  public static final String WORLD_SIZE = "WORLD_SIZE";
  public static final String RANK = "RANK";
  public static final String NNODES = "NNODES";
  public static final String NODE_RANK = "NODE_RANK";
  public static final String LOCAL_WORLD_SIZE = "LOCAL_WORLD_SIZE";
  /** The backend the task should pass to {@code init_process_group} ("nccl", "hccl", …, "gloo"). */
  public static final String BACKEND = "HETEROFLOW_DIST_BACKEND";
  /** Only for a member of a task group: the group's id. */
  public static final String GROUP_ID = "HETEROFLOW_GROUP_ID";
  /** Every name this class may set. */
  public static final List<String> NAMES = List.of(MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, NNODES, NODE_RANK,
      LOCAL_WORLD_SIZE, BACKEND, GROUP_ID);

  private DistributedEnvironment() {}

  /**
   * The variables of {@code run} on the node read as {@code node}; {@code defaultMasterPort} is the MASTER_PORT of
   * a single run that names none (a control plane from before master ports were chosen per task).
   */
  public static Map<String, String> of(Run run, NodeReading node, int defaultMasterPort) {
    Map<String, String> env = new LinkedHashMap<>();
    int localWorldSize = Math.max(1, run.cards().size());
    Run.Distributed group = run.distributed();
    if (group == null) {
      env.put(MASTER_ADDR, node.primaryInternalIp());
      env.put(MASTER_PORT, String.valueOf(run.masterPort() == null ? defaultMasterPort : run.masterPort()));
      env.put(WORLD_SIZE, "1");
      env.put(RANK, "0");
      env.put(NNODES, "1");
      env.put(NODE_RANK, "0");
      env.put(LOCAL_WORLD_SIZE, String.valueOf(localWorldSize));
      env.put(BACKEND, singleBackend(run, node.vendor()));
      return env;
    }
    env.put(MASTER_ADDR, group.masterAddr());
    env.put(MASTER_PORT, String.valueOf(group.masterPort()));
    env.put(WORLD_SIZE, String.valueOf(group.worldSize()));
    env.put(RANK, String.valueOf(group.rank()));
    env.put(NNODES, String.valueOf(group.worldSize()));
    env.put(NODE_RANK, String.valueOf(group.rank()));
    env.put(LOCAL_WORLD_SIZE, String.valueOf(localWorldSize));
    env.put(BACKEND, group.backend());
    env.put(GROUP_ID, group.groupId().toString());
    return env;
  }

  /** A single run's backend: its vendor's collective library when it has cards, else gloo (CPU only). */
  static String singleBackend(Run run, GpuVendor vendor) {
    return vendor != null && !run.cards().isEmpty() ? vendor.collectiveBackend() : GpuVendor.CROSS_DOMAIN_BACKEND;
  }
}
