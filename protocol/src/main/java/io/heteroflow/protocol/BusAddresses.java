package io.heteroflow.protocol;

/**
 * Every event-bus address HeteroFlow uses, in one place. Payloads are JSON objects; their fields are
 * documented in docs/event-bus.md. The bus is best-effort: every consumer is idempotent and every loop
 * reconciles from PostgreSQL, so a lost message delays work but never loses it.
 */
public final class BusAddresses {
  private BusAddresses() {}

  /** agent → control plane, request-reply: heartbeat in, reconciliation (tasks to run / stop) out. */
  public static final String NODE_HEARTBEAT = "heteroflow.node.heartbeat";
  /**
   * agent → control plane, request-reply: a liveness-only beat {node_id, boot_id, seq, active_tasks} between full
   * heartbeats (renews the node's lease); the same reconciliation out, {@code applied: false} asking for a full one.
   */
  public static final String NODE_BEAT = "heteroflow.node.beat";
  /**
   * agent → control plane, request-reply, at a clean shutdown: {node_id, boot_id} lets go of the node, so a
   * replacement agent process takes it over at once; cleared only when boot_id is the holder's.
   */
  public static final String NODE_RELEASE = "heteroflow.node.release";
  /** agent → control plane, request-reply: claim a task scheduled → running by CAS before starting it. */
  public static final String TASK_CLAIM = "heteroflow.task.claim";
  /** agent → control plane, request-reply: a task's process ended (exit code, log tail). */
  public static final String TASK_REPORT = "heteroflow.task.report";
  /** api → scheduler loop, fire-and-forget: a task was created or resources were freed. */
  public static final String SCHEDULER_KICK = "heteroflow.scheduler.kick";
  /** control plane → the group lifecycle, fire-and-forget: a group member moved, or a group stop was asked for. */
  public static final String GROUPS_KICK = "heteroflow.groups.kick";
  /** control plane → the inference rebuild, fire-and-forget: a service's replica count or window changed. */
  public static final String SERVICES_KICK = "heteroflow.services.kick";

  /**
   * scheduler loop → any control plane's bind verticle, request-reply: bind one decided task in one PostgreSQL
   * transaction under the leader's fence. Bind runs anywhere: its CAS and the fence make that safe.
   */
  public static final String SCHEDULER_BIND = "heteroflow.scheduler.bind";
  /** control plane, published when this or another member becomes leader: {member_id, term}. */
  public static final String LEADERSHIP_CHANGED = "heteroflow.leadership.changed";

  private static final String AGENT_PREFIX = "heteroflow.agent.";

  /** control plane → one agent: run this bound task (best-effort push; heartbeats reconcile). */
  public static String agentRun(String nodeId) {
    return AGENT_PREFIX + nodeId + ".run";
  }

  /** control plane → one agent: stop this task (SIGTERM, grace, SIGKILL). */
  public static String agentStop(String nodeId) {
    return AGENT_PREFIX + nodeId + ".stop";
  }

  /** control plane → one agent, request-reply: the log text of a task it runs or ran. */
  public static String agentLogs(String nodeId) {
    return AGENT_PREFIX + nodeId + ".logs";
  }

  /** Event-bus clients (SockJS bridge, {@code /eventbus}): submit a task; body = the REST body. Local consumer only. */
  public static final String API_TASKS_SUBMIT = "heteroflow.api.tasks.submit";
  /** Event-bus clients: stop a task; body {@code {"id": "<task id>"}}. Local consumer only. */
  public static final String API_TASKS_STOP = "heteroflow.api.tasks.stop";
  /** Every tenant's task status changes (admin clients of the bridge); published locally on each control plane. */
  public static final String ADMIN_TASK_EVENTS = "heteroflow.admin.task-events";

  /** One tenant's task status changes, published locally on each control plane. */
  public static String tenantTaskEvents(String tenant) {
    return "heteroflow.tenant." + tenant + ".task-events";
  }
}
