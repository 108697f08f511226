package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.protocol.TaskStatus;
import java.util.stream.Collectors;

/**
 * Every SQL statement of the control plane, named. The conditional writes here are where the invariants
 * live: CAS on task status, the capacity check on nodes, the partial unique index on allocations.
 */
final class Sql {
  private Sql() {}

  /** The one definition of "active" (TaskStatus.ACTIVE), shared by binds, ledgers and quotas. */
  static final String ACTIVE_STATES = TaskStatus.ACTIVE.stream().map(status -> "'" + status.wire() + "'").sorted()
      .collect(Collectors.joining(", ", "(", ")"));

  /** Tasks of a tenant an admin deactivated wait: nothing new starts for it (V16). */
  static final String TENANT_ACTIVE = " AND tenant NOT IN (SELECT name FROM tenants WHERE NOT active)";

  private static final String TASK_COLUMNS = "id, tenant, name, type, status, priority, preemptible, gpu_required,"
      + " gpu_memory_mb, gpu_type, group_id, spec, node_id, gpu_indices, reason_code, reason_message, exit_code,"
      + " preempt_count, created_at, scheduled_at, started_at, finished_at, version, cpu_cores, memory_mb, host_port, shard, bound_term,"
      + " master_port, last_checkpoint_at, preempting_since, nominated_node, nominated_until, group_rank, group_attempt,"
      + " distributed, queue, estimated_start_at, estimate_note, service_id, replica_slot, replica_generation";

  // ---- tenants and share groups
  static final String INSERT_TENANT =
      "INSERT INTO tenants (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING name, created_at";
  static final String SET_TENANT_ACTIVE = "UPDATE tenants SET active = $2 WHERE name = $1 RETURNING name, active";
  /** What waits because its tenant was deactivated says so (a ledger entry where the reason changed). */
  static final String MARK_PENDING_OF_INACTIVE = "WITH changed AS (UPDATE tasks SET reason_code = 'TenantInactive',"
      + " reason_message = 'tenant ' || tenant || ' is inactive: nothing new starts for it' WHERE tenant = $1"
      + " AND status = 'pending' AND reason_code IS DISTINCT FROM 'TenantInactive' RETURNING id, reason_message)"
      + " INSERT INTO task_events (task_id, kind, code, message) SELECT id, 'unschedulable', 'TenantInactive',"
      + " reason_message FROM changed";
  static final String EXISTING_TENANTS = "SELECT name FROM tenants WHERE name = ANY($1)";
  static final String INSERT_SHARE_GROUP =
      "INSERT INTO share_groups (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING name, created_at";
  static final String INSERT_SHARE_GROUP_MEMBER = "INSERT INTO share_group_members (group_name, tenant) VALUES ($1, $2)";

  // ---- tenant tokens and the audit ledger (V17): only SHA-256 digests of tokens, never a token
  /** Authentication: the tenant of a token that is not revoked (the UNIQUE index on token_sha256 serves it). */
  static final String TENANT_BY_TOKEN = "SELECT t.name, t.active FROM tenant_tokens k JOIN tenants t ON t.name = k.tenant"
      + " WHERE k.token_sha256 = $1 AND k.revoked_at IS NULL";
  private static final String TOKEN_COLUMNS = "id, tenant, prefix, created_at, created_by, revoked_at, revoked_by";
  static final String INSERT_TOKEN = "INSERT INTO tenant_tokens (id, tenant, token_sha256, prefix, created_at, created_by)"
      + " SELECT $1, name, $3, $4, $5, $6 FROM tenants WHERE name = $2 RETURNING " + TOKEN_COLUMNS;
  static final String TOKENS_OF_TENANT = "SELECT " + TOKEN_COLUMNS + " FROM tenant_tokens WHERE tenant = $1"
      + " ORDER BY created_at, id";
  static final String TENANT_EXISTS = "SELECT 1 FROM tenants WHERE name = $1";
  /** Revokes every live token of a tenant but one (rotation with revoke_previous). */
  static final String REVOKE_OTHER_TOKENS = "UPDATE tenant_tokens SET revoked_at = $3, revoked_by = $4"
      + " WHERE tenant = $1 AND id <> $2 AND revoked_at IS NULL RETURNING id";
  /** Revokes one token (idempotent: a revoked one keeps its first revocation) and answers it. */
  static final String REVOKE_TOKEN = "WITH revoked AS (UPDATE tenant_tokens SET revoked_at = $3, revoked_by = $4"
      + " WHERE tenant = $1 AND id = $2 AND revoked_at IS NULL RETURNING " + TOKEN_COLUMNS + ")"
      + " SELECT true AS changed, " + TOKEN_COLUMNS + " FROM revoked UNION ALL SELECT false AS changed, " + TOKEN_COLUMNS
      + " FROM tenant_tokens WHERE tenant = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM revoked)";
  static final String INSERT_AUDIT = "INSERT INTO audit_events (at, actor, action, target, detail, request_id)"
      + " VALUES ($1, $2, $3, $4, $5, $6)";
  static final String AUDIT_PAGE = "SELECT id, at, actor, action, target, detail, request_id FROM audit_events"
      + " WHERE ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $1";

  // ---- tasks
  static final String INSERT_TASK = "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible,"
      + " gpu_required, gpu_memory_mb, gpu_type, spec, idempotency_key, request_sha256, cpu_cores, memory_mb, queue)"
      + " VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
      + " ON CONFLICT ON CONSTRAINT one_task_per_idempotency_key DO NOTHING RETURNING " + TASK_COLUMNS;
  static final String TASK_BY_IDEMPOTENCY_KEY =
      "SELECT request_sha256, " + TASK_COLUMNS + " FROM tasks WHERE tenant = $1 AND idempotency_key = $2";
  static final String TASK_BY_ID = "SELECT " + TASK_COLUMNS + " FROM tasks WHERE id = $1";
  static final String TASKS_FILTERED = "SELECT " + TASK_COLUMNS + " FROM tasks"
      + " WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text[] IS NULL OR status = ANY($2))"
      + " ORDER BY created_at DESC, id LIMIT $3";
  static final String TASK_LOG_TAIL = "SELECT log_tail FROM tasks WHERE id = $1";
  static final String TASK_EVENTS =
      "SELECT at, kind, from_status, to_status, code, message FROM task_events WHERE task_id = $1 ORDER BY id";

  /**
   * The queue: priority descending, then FIFO; a round continues after the scan cursor (priority, created_at, id),
   * taking along any task of higher priority created after the newest one the pass has seen.
   */
  static final String PENDING_BY_IDS = "SELECT " + TASK_COLUMNS + " FROM tasks WHERE status = 'pending' AND group_id IS NULL" + TENANT_ACTIVE
      + " AND id = ANY($1)";
  static final String PENDING_FROM_START = "SELECT " + TASK_COLUMNS + " FROM tasks WHERE status = 'pending' AND group_id IS NULL" + TENANT_ACTIVE
      + " ORDER BY priority DESC, created_at, id LIMIT $1";
  static final String PENDING_CONTINUE = "SELECT " + TASK_COLUMNS + " FROM tasks WHERE status = 'pending' AND group_id IS NULL" + TENANT_ACTIVE
      + " AND (priority < $1 OR (priority = $1 AND (created_at, id) > ($2, $3)) OR (priority > $1 AND created_at > $5))"
      + " ORDER BY priority DESC, created_at, id LIMIT $4";

  /** CAS of any declared transition; timestamps follow the target state. */
  static final String CAS_STATUS = "UPDATE tasks SET status = $3, version = version + 1,"
      + " started_at = CASE WHEN $3 = 'running' THEN now() ELSE started_at END,"
      + " preempting_since = CASE WHEN $3 = 'preempting' THEN now() ELSE preempting_since END,"
      + " finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'stopped') THEN now() ELSE finished_at END,"
      + " exit_code = COALESCE($4, exit_code), log_tail = COALESCE($5, log_tail),"
      + " reason_code = CASE WHEN $6::text IS NULL THEN reason_code ELSE $6 END,"
      + " reason_message = CASE WHEN $6::text IS NULL THEN reason_message ELSE $7 END,"
      + " last_checkpoint_at = COALESCE($8, last_checkpoint_at)"
      + " WHERE id = $1 AND status = $2 RETURNING node_id";
  /** Back to the queue: the task no longer holds a node (RETURNING gives the node it held, for the release). */
  static final String CAS_REQUEUE = "WITH held AS (SELECT node_id FROM tasks WHERE id = $1 AND status = $2 FOR UPDATE)"
      + " UPDATE tasks t SET status = 'pending', version = version + 1, node_id = NULL,"
      + " gpu_indices = '{}', host_port = NULL, master_port = NULL, shard = NULL, scheduled_at = NULL, started_at = NULL,"
      + " preempting_since = NULL, last_checkpoint_at = COALESCE($5, t.last_checkpoint_at),"
      + " reason_code = $3, reason_message = $4,"
      + " preempt_count = preempt_count + CASE WHEN $2 = 'preempting' THEN 1 ELSE 0 END,"
      + " preemptible = CASE WHEN $2 = 'preempting' THEN false ELSE preemptible END"
      + " FROM held WHERE t.id = $1 AND t.status = $2 RETURNING held.node_id";
  /** The claim of a single bind; its last statement, {@link #SET_PORTS_AND_STAMP}, sets the ports and scheduled_at. */
  static final String CAS_BIND = "UPDATE tasks SET status = 'scheduled', version = version + 1, node_id = $2,"
      + " gpu_indices = $3, host_port = $4, shard = $5, bound_term = $6, reason_code = NULL, nominated_node = NULL,"
      + " nominated_until = NULL, nominated_victims = NULL,"
      + " reason_message = NULL, borrowed_from = NULL"
      + " WHERE id = $1 AND status = 'pending'" + TENANT_ACTIVE + " RETURNING type, cpu_cores, memory_mb, tenant, queue";
  static final String SET_REASON = "WITH changed AS (UPDATE tasks SET reason_code = $2, reason_message = $3"
      + " WHERE id = $1 AND status = 'pending'"
      + " AND (reason_code IS DISTINCT FROM $2 OR reason_message IS DISTINCT FROM $3) RETURNING id)"
      + " INSERT INTO task_events (task_id, kind, code, message) SELECT id, 'unschedulable', $2, $3 FROM changed";
  /**
   * When pending tasks are expected to start (the round's reservation plan), written only where it changed:
   * $1 ids, $2 times (null: cannot be known), $3 notes.
   */
  static final String SET_ESTIMATES = "UPDATE tasks t SET estimated_start_at = e.at, estimate_note = e.note"
      + " FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]) AS e(id, at, note) WHERE t.id = e.id"
      + " AND t.status = 'pending' AND (t.estimated_start_at IS DISTINCT FROM e.at OR t.estimate_note IS DISTINCT FROM e.note)";
  static final String SET_GROUP_ESTIMATES = "UPDATE task_groups g SET estimated_start_at = e.at, estimate_note = e.note"
      + " FROM unnest($1::uuid[], $2::timestamptz[], $3::text[]) AS e(id, at, note) WHERE g.id = e.id"
      + " AND g.status = 'pending' AND (g.estimated_start_at IS DISTINCT FROM e.at OR g.estimate_note IS DISTINCT FROM e.note)";
  /**
   * What every active task frees and when it is expected to (SPEC §13): its start (or bind) plus its declared
   * expected runtime; once that has passed, plus its timeout; never before now.
   */
  static final String ACTIVE_ENDINGS = "SELECT node_id, gpu_indices, shard, cpu_cores, memory_mb, CASE"
      + " WHEN coalesce(started_at, scheduled_at, now()) + make_interval(secs => (spec->>'expected_runtime_seconds')::int)"
      + " > now() THEN coalesce(started_at, scheduled_at, now())"
      + " + make_interval(secs => (spec->>'expected_runtime_seconds')::int)"
      + " ELSE greatest(now(), coalesce(started_at, scheduled_at, now()) + make_interval(secs => coalesce("
      + "(spec->>'timeout_seconds')::int, " + TaskSpec.DEFAULT_TIMEOUT_SECONDS + "))) END AS ends_at"
      + " FROM tasks WHERE node_id IS NOT NULL AND status IN " + ACTIVE_STATES;
  static final String INSERT_TRANSITION_EVENT = "INSERT INTO task_events (task_id, kind, from_status, to_status, code,"
      + " message) VALUES ($1, 'transition', $2, $3, $4, $5)";

  // ---- allocations and the GPU ledger
  static final String INSERT_WHOLE_CARD_ALLOCATION =
      "INSERT INTO allocations (task_id, node_id, gpu_index, kind, tenant) VALUES ($1, $2, $3, 'whole', $4)";
  static final String INSERT_SHARD_ALLOCATION = "INSERT INTO allocations (task_id, node_id, gpu_index, kind, memory_mb,"
      + " tenant) VALUES ($1, $2, $3, 'shard', $4, $5)";
  /** What is already on these cards: shards, their memory, whole-card tasks, and every tenant present. */
  static final String CARD_OCCUPANTS = "SELECT gpu_index, kind, memory_mb, tenant FROM allocations"
      + " WHERE node_id = $1 AND gpu_index = ANY($2) AND active";
  /** A single bind's last statement: scheduled_at is the clock's time now, as the bind is about to commit. */
  static final String SET_PORTS_AND_STAMP = "UPDATE tasks SET host_port = $2, master_port = $3,"
      + " scheduled_at = clock_timestamp() WHERE id = $1";
  static final String SHARE_MEMBERSHIPS = "SELECT group_name, tenant FROM share_group_members";
  /** The host and master ports the node's active tasks hold. */
  static final String PORTS_IN_USE = "SELECT host_port, master_port FROM tasks WHERE node_id = $1"
      + " AND (host_port IS NOT NULL OR master_port IS NOT NULL) AND status IN " + ACTIVE_STATES;
  static final String RELEASE_ALLOCATIONS = "UPDATE allocations SET active = false, released_at = clock_timestamp()"
      + " WHERE task_id = $1 AND active RETURNING kind";
  static final String INSERT_LEDGER_ENTRY =
      "INSERT INTO gpu_ledger (node_id, task_id, delta, entry) VALUES ($1, $2, $3, $4)";

  // ---- nodes and cards
  static final String LOCK_NODE = "SELECT status, executable, cordoned, cpu_percent, memory_total_gb, memory_used_mb,"
      + " gpu_total, gpu_used FROM nodes WHERE id = $1 FOR UPDATE";
  static final String CARDS_OF_NODE_AT = "SELECT gpu_index, memory_total_mb, memory_used_mb, utilization_percent,"
      + " temperature_c FROM cards WHERE node_id = $1 AND gpu_index = ANY($2)";
  /** Capacity accounting: cards, declared CPU and memory, refused past the node's totals. */
  static final String ADD_ACCOUNTED = "UPDATE nodes SET gpu_used = gpu_used + $2, cpu_allocated = cpu_allocated + $3,"
      + " memory_allocated_mb = memory_allocated_mb + $4, version = version + 1"
      + " WHERE id = $1 AND gpu_used + $2 <= gpu_total AND gpu_used + $2 >= 0"
      + " AND cpu_allocated + $3 <= cpu_cores + 0.000001 AND memory_allocated_mb + $4 <= memory_total_gb * 1024"
      + " RETURNING gpu_used";
  /** Release: the task's cards, CPU and memory return to its node (no capacity check on the way down). */
  static final String RETURN_ACCOUNTED = "UPDATE nodes SET gpu_used = gpu_used - $2,"
      + " cpu_allocated = greatest(0, cpu_allocated - $3), memory_allocated_mb = greatest(0, memory_allocated_mb - $4),"
      + " version = version + 1 WHERE id = $1";
  static final String TASK_DEMAND = "SELECT cpu_cores, memory_mb FROM tasks WHERE id = $1";

  // ---- the batch bind (BatchBindStore): one transaction per round's share of binds, set-based writes
  /** Every node of the batch, locked in id order (two batches over shared nodes cannot deadlock). */
  static final String LOCK_NODES = "SELECT id, status, executable, cordoned, cpu_percent, memory_total_gb, memory_used_mb,"
      + " gpu_total, gpu_used, cpu_cores, cpu_allocated, memory_allocated_mb FROM nodes WHERE id = ANY($1)"
      + " ORDER BY id FOR UPDATE";
  static final String LOCK_PENDING_TASKS = "SELECT id, type, cpu_cores, memory_mb, tenant, queue FROM tasks"
      + " WHERE id = ANY($1) AND status = 'pending'" + TENANT_ACTIVE + " ORDER BY id FOR UPDATE";
  static final String CARDS_OF_NODES = "SELECT node_id, gpu_index, model, memory_total_mb, memory_used_mb,"
      + " utilization_percent, temperature_c FROM cards WHERE node_id = ANY($1)";
  /** Every active allocation on these nodes: a batch bind's occupants, a snapshot refresh's card use. */
  static final String ACTIVE_ALLOCATIONS_ON_NODES = "SELECT node_id, gpu_index, kind, memory_mb, tenant FROM allocations"
      + " WHERE node_id = ANY($1) AND active";
  static final String PORTS_IN_USE_ON_NODES = "SELECT node_id, host_port, master_port FROM tasks WHERE node_id = ANY($1)"
      + " AND (host_port IS NOT NULL OR master_port IS NOT NULL) AND status IN " + ACTIVE_STATES;
  /**
   * The set-based writes repeat their id array as {@code = ANY($1)} so the planner looks rows up by key. The task
   * CAS is the batch's last statement: scheduled_at is the clock's time then, as the bind is about to commit.
   */
  static final String BATCH_CAS_BIND = "UPDATE tasks t SET status = 'scheduled', version = t.version + 1,"
      + " node_id = b.node_id, gpu_indices = b.gpu_indices::integer[], host_port = b.host_port,"
      + " master_port = b.master_port, shard = b.shard::jsonb, bound_term = $6::bigint,"
      + " scheduled_at = clock_timestamp(), reason_code = NULL, reason_message = NULL, nominated_node = NULL,"
      + " nominated_until = NULL, nominated_victims = NULL, borrowed_from = b.borrowed_from"
      + " FROM unnest($1::uuid[], $2::text[], $3::text[], $4::integer[], $5::text[], $7::integer[], $8::text[])"
      + " AS b(id, node_id, gpu_indices, host_port, shard, master_port, borrowed_from) WHERE t.id = ANY($1) AND t.id = b.id"
      + " AND t.status = 'pending' RETURNING t.id";
  static final String BATCH_INSERT_ALLOCATIONS = "INSERT INTO allocations (task_id, node_id, gpu_index, kind,"
      + " memory_mb, tenant) SELECT * FROM unnest($1::uuid[], $2::text[], $3::integer[], $4::text[], $5::bigint[],"
      + " $6::text[])";
  /** {@link #ADD_ACCOUNTED} for many nodes at once; a node past its totals is left out of RETURNING. */
  static final String BATCH_ADD_ACCOUNTED = "UPDATE nodes n SET gpu_used = n.gpu_used + d.cards,"
      + " cpu_allocated = n.cpu_allocated + d.cpu, memory_allocated_mb = n.memory_allocated_mb + d.memory,"
      + " version = n.version + 1 FROM unnest($1::text[], $2::integer[], $3::float8[], $4::bigint[])"
      + " AS d(id, cards, cpu, memory) WHERE n.id = ANY($1) AND n.id = d.id AND n.gpu_used + d.cards <= n.gpu_total"
      + " AND n.cpu_allocated + d.cpu <= n.cpu_cores + 0.000001 AND n.memory_allocated_mb + d.memory"
      + " <= n.memory_total_gb * 1024 RETURNING n.id, n.version";
  static final String BATCH_INSERT_LEDGER = "INSERT INTO gpu_ledger (node_id, task_id, delta, entry)"
      + " SELECT node_id, task_id, delta, 'bind' FROM unnest($1::text[], $2::uuid[], $3::integer[])"
      + " AS x(node_id, task_id, delta)";
  static final String BATCH_INSERT_BIND_EVENTS = "INSERT INTO task_events (task_id, kind, from_status, to_status,"
      + " message) SELECT task_id, 'transition', 'pending', 'scheduled', message"
      + " FROM unnest($1::uuid[], $2::text[]) AS x(task_id, message)";

  // ---- the heartbeat ledger: gpu_used recomputed as SUM(gpu_required) of the node's active tasks
  static final String LEDGER_SUSPECTS = "SELECT n.id FROM nodes n LEFT JOIN (SELECT node_id, sum(gpu_required) AS s"
      + " FROM tasks WHERE status IN " + ACTIVE_STATES + " GROUP BY node_id) t ON t.node_id = n.id"
      + " WHERE n.gpu_used <> coalesce(t.s, 0)";
  static final String LEDGER_TRUTH = "SELECT coalesce(sum(gpu_required), 0) AS s FROM tasks WHERE node_id = $1"
      + " AND status IN " + ACTIVE_STATES;
  static final String LEDGER_CORRECT = "UPDATE nodes SET gpu_used = $2, version = version + 1 WHERE id = $1";

  /** Heartbeats only: soft state, so their transaction does not wait for the WAL flush. */
  static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit TO OFF";
  /**
   * Whether node row {@code node} is held against boot {@code boot} (V18): another agent boot holds it, has not
   * released it, and heartbeated less than {@code window} seconds ago (database clock).
   */
  private static String heldAgainst(String node, String boot, String window) {
    return "(" + node + ".boot_id IS NOT NULL AND " + node + ".boot_id IS DISTINCT FROM " + boot + " AND " + node
        + ".released_at IS NULL AND coalesce(" + lastSign(node) + " > now() - make_interval(secs => "
        + window + "), false))";
  }

  /**
   * Node row {@code node}'s last sign of life (V19): the later of its last full heartbeat and its lease renewal,
   * a lease counting only while it is of the node's holder (its boot id). Null for a node never heard from.
   */
  static String lastSign(String node) {
    return "greatest(" + node + ".last_heartbeat_at, (SELECT l.renewed_at FROM node_leases l WHERE l.node_id = "
        + node + ".id AND l.boot_id = " + node + ".boot_id))";
  }

  /** The control plane node row {@code node}'s last sign of life came through (V19), null when unknown. */
  private static String lastVia(String node) {
    return "coalesce((SELECT l.via FROM node_leases l WHERE l.node_id = " + node + ".id AND l.boot_id = " + node
        + ".boot_id AND l.renewed_at > " + node + ".last_heartbeat_at), " + node + ".heartbeat_via)";
  }

  /**
   * Whether node row {@code node} has been silent for longer than its grace: {@code $1} seconds, or {@code $1 + $2}
   * when its last sign of life came through a control plane that is itself gone (no sign of it for {@code $3}
   * seconds): its agent is reconnecting to another one, not dead.
   */
  private static String silentPastGrace(String node) {
    return lastSign(node) + " < now() - make_interval(secs => CASE WHEN " + lastVia(node) + " IS NOT NULL AND NOT"
        + " EXISTS (SELECT 1 FROM control_planes c WHERE c.member_id = " + lastVia(node) + " AND c.last_seen > now()"
        + " - make_interval(secs => $3)) THEN $1::float8 + $2::float8 ELSE $1::float8 END)";
  }

  /**
   * A batch of heartbeats (HeartbeatWriter), one per node; a node's row changes only for a newer heartbeat, and
   * never for a heartbeat of another boot while the node is held ($18: the hold window in seconds). A row not
   * updated is still locked by the statement, so {@link #HELD_NODES} in the same transaction reads the very row
   * version this decision was made on.
   */
  static final String UPSERT_NODE_HEARTBEATS = "INSERT INTO nodes (id, gpu_vendor, status, cpu_cores, cpu_percent,"
      + " memory_total_gb, memory_used_mb, gpu_total, agent_labels, topology, internal_ips, public_ips, boot_id,"
      + " heartbeat_seq, last_heartbeat_at, region, zone, rack, dedicated_tenant, boot_seen_at, heartbeat_via)"
      + " SELECT h.id, h.vendor, 'online', h.cores, h.cpu, h.memory_total, h.memory_used, h.gpus, h.labels::jsonb,"
      + " h.topology, h.ips::jsonb, h.public_ips::jsonb, h.boot, h.seq, now(), h.region, h.zone, h.rack, h.dedicated,"
      + " now(), $19"
      + " FROM unnest($1::text[], $2::text[], $3::integer[], $4::float8[], $5::float8[], $6::bigint[], $7::integer[],"
      + " $8::text[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::text[], $14::text[], $15::text[],"
      + " $16::text[], $17::text[]) AS h(id, vendor, cores, cpu, memory_total, memory_used, gpus, labels, topology, ips,"
      + " boot, seq, region, zone, rack, dedicated, public_ips)"
      + " ON CONFLICT (id) DO UPDATE SET gpu_vendor = EXCLUDED.gpu_vendor,"
      + " status = CASE WHEN nodes.status = 'offline' THEN 'online' ELSE nodes.status END,"
      + " cpu_cores = EXCLUDED.cpu_cores, cpu_percent = EXCLUDED.cpu_percent,"
      + " memory_total_gb = EXCLUDED.memory_total_gb, memory_used_mb = EXCLUDED.memory_used_mb,"
      + " gpu_total = EXCLUDED.gpu_total, agent_labels = EXCLUDED.agent_labels, topology = EXCLUDED.topology,"
      + " internal_ips = EXCLUDED.internal_ips, public_ips = EXCLUDED.public_ips, boot_id = EXCLUDED.boot_id,"
      + " heartbeat_seq = EXCLUDED.heartbeat_seq,"
      + " boot_seen_at = CASE WHEN nodes.boot_id IS DISTINCT FROM EXCLUDED.boot_id THEN now() ELSE nodes.boot_seen_at END,"
      + " released_at = CASE WHEN nodes.boot_id IS DISTINCT FROM EXCLUDED.boot_id THEN NULL ELSE nodes.released_at END,"
      + " last_heartbeat_at = now(), heartbeat_via = EXCLUDED.heartbeat_via,"
      + " region = COALESCE(nodes.region, EXCLUDED.region),"
      + " zone = COALESCE(nodes.zone, EXCLUDED.zone), rack = COALESCE(nodes.rack, EXCLUDED.rack),"
      + " dedicated_tenant = CASE WHEN nodes.dedicated_by_admin THEN nodes.dedicated_tenant"
      + " ELSE COALESCE(nodes.dedicated_tenant, EXCLUDED.dedicated_tenant) END,"
      + " version = nodes.version + 1"
      + " WHERE (nodes.boot_id IS DISTINCT FROM EXCLUDED.boot_id OR nodes.heartbeat_seq < EXCLUDED.heartbeat_seq)"
      + " AND NOT " + heldAgainst("nodes", "EXCLUDED.boot_id", "$18")
      + " RETURNING id";
  /**
   * Of the heartbeats not applied ($1 node ids, $2 their boot ids), those refused because another boot holds the
   * node ($3: the hold window in seconds): since when it is held and how long ago its holder last heartbeated.
   */
  static final String HELD_NODES = "SELECT n.id, coalesce(n.boot_seen_at, n.last_heartbeat_at) AS held_since,"
      + " extract(epoch FROM now() - " + lastSign("n") + ")::float8 AS silent_seconds"
      + " FROM unnest($1::text[], $2::text[]) AS h(id, boot) JOIN nodes n ON n.id = h.id"
      + " WHERE " + heldAgainst("n", "h.boot", "$3");
  /** The holder ($2, its boot id) of node $1 lets go (idempotent); answers a row only when it is the holder. */
  static final String RELEASE_NODE = "UPDATE nodes SET released_at = coalesce(released_at, now())"
      + " WHERE id = $1 AND boot_id = $2 RETURNING id";
  /** A card row is rewritten only when the heartbeat changed it (no dead tuple, no WAL for an idle card). */
  static final String UPSERT_CARDS = "INSERT INTO cards (node_id, gpu_index, uuid, model, memory_total_mb,"
      + " memory_used_mb, utilization_percent, temperature_c, numa_node) SELECT * FROM unnest($1::text[],"
      + " $2::integer[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::integer[], $8::integer[], $9::integer[])"
      + " ON CONFLICT (node_id, gpu_index) DO UPDATE SET uuid = EXCLUDED.uuid, model = EXCLUDED.model,"
      + " memory_total_mb = EXCLUDED.memory_total_mb, memory_used_mb = EXCLUDED.memory_used_mb,"
      + " utilization_percent = EXCLUDED.utilization_percent, temperature_c = EXCLUDED.temperature_c,"
      + " numa_node = EXCLUDED.numa_node WHERE (cards.uuid, cards.model, cards.memory_total_mb, cards.memory_used_mb,"
      + " cards.utilization_percent, cards.temperature_c, cards.numa_node) IS DISTINCT FROM (EXCLUDED.uuid,"
      + " EXCLUDED.model, EXCLUDED.memory_total_mb, EXCLUDED.memory_used_mb, EXCLUDED.utilization_percent,"
      + " EXCLUDED.temperature_c, EXCLUDED.numa_node)";
  /**
   * After applied heartbeats ($1 node ids, $2 their active_tasks as JSON arrays): for each task running on
   * such a node, counts the heartbeats in a row that did not report it (a report resets the count); answers the
   * tasks counted, and whether each started before its agent's current boot (lost in a restart) or under it (the
   * agent forgot it: its claim's answers were lost, say). An agent reports a task from the moment it has its run,
   * before it claims it, so at most one heartbeat composed before the claim can miss a task it runs.
   */
  static final String COUNT_AGENT_MISSES = "UPDATE tasks t SET agent_misses = CASE WHEN b.active::jsonb ? t.id::text"
      + " THEN 0 ELSE t.agent_misses + 1 END FROM unnest($1::text[], $2::text[]) AS b(node_id, active), nodes n"
      + " WHERE t.node_id = ANY($1) AND t.node_id = b.node_id AND n.id = b.node_id AND t.status = 'running'"
      + " AND (t.agent_misses > 0 OR NOT b.active::jsonb ? t.id::text)"
      + " RETURNING t.id, t.node_id, t.agent_misses, t.started_at < n.boot_seen_at AS restarted";
  /** Cards a node no longer reports (index at or past its new count). */
  static final String DELETE_CARDS_BEYOND = "DELETE FROM cards c USING unnest($1::text[], $2::integer[])"
      + " AS x(node_id, count) WHERE c.node_id = ANY($1) AND c.node_id = x.node_id AND c.gpu_index >= x.count";
  /** How many live nodes there are, and how many of them are silent past the grace period. */
  static final String SILENCE = "SELECT count(*) AS live, count(*) FILTER (WHERE " + silentPastGrace("n")
      + ") AS silent FROM nodes n WHERE n.status <> 'offline'";
  static final String MARK_SILENT_NODES_OFFLINE = "UPDATE nodes n SET status = 'offline', version = n.version + 1"
      + " WHERE n.status <> 'offline' AND " + silentPastGrace("n") + " RETURNING n.id";
  /**
   * A batch of liveness-only beats ($1 node ids, $2 boot ids, $3 sequence numbers, $4 the control plane each came
   * through): each renews its node's lease when its boot is the node's holder, the node is not offline (an offline
   * node comes back with a full heartbeat) and it is newer than the lease. Answers the nodes renewed.
   */
  static final String RENEW_NODE_LEASES = "INSERT INTO node_leases (node_id, boot_id, seq, renewed_at, via)"
      + " SELECT b.id, b.boot, b.seq, now(), b.via FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[])"
      + " AS b(id, boot, seq, via) JOIN nodes n ON n.id = b.id AND n.boot_id = b.boot AND n.status <> 'offline'"
      + " AND n.released_at IS NULL"
      + " ON CONFLICT (node_id) DO UPDATE SET boot_id = EXCLUDED.boot_id, seq = EXCLUDED.seq, renewed_at = now(),"
      + " via = EXCLUDED.via WHERE node_leases.boot_id IS DISTINCT FROM EXCLUDED.boot_id"
      + " OR node_leases.seq < EXCLUDED.seq RETURNING node_id";
  /** The tasks of the nodes $1 their agents should run or stop (the heartbeats' reconciliation, batched). */
  static final String TASKS_FOR_AGENTS = "SELECT " + TASK_COLUMNS + " FROM tasks WHERE node_id = ANY($1)"
      + " AND status IN ('scheduled', 'stopping', 'preempting')";
  /** Of the task ids agents say they run ($1, each on the node at the same place in $2), those not active there. */
  static final String NOT_ACTIVE_ON_NODES = "SELECT r.id, r.node FROM unnest($1::uuid[], $2::text[]) AS r(id, node)"
      + " WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = r.id AND t.node_id = r.node AND t.status IN "
      + ACTIVE_STATES + ")";

  private static final String NODE_COLUMNS = "n.id, n.gpu_vendor, n.status, n.executable, n.dedicated_tenant, n.region,"
      + " n.zone, n.rack, n.agent_labels || n.labels AS labels, n.topology, n.internal_ips, n.public_ips, n.cpu_cores, n.cpu_percent,"
      + " n.memory_total_gb, n.memory_used_mb, n.gpu_total, n.gpu_used, " + lastSign("n") + " AS last_heartbeat_at,"
      + " n.cpu_allocated,"
      + " n.memory_allocated_mb, (SELECT count(*) FROM tasks t WHERE t.node_id = n.id AND t.type = 'inference'"
      + " AND t.status IN " + ACTIVE_STATES + ") AS inference_tasks, n.cordoned, n.dedicated_by_admin,"
      + " (SELECT coalesce(jsonb_object_agg(s.service_id::text, s.replicas), '{}'::jsonb) FROM (SELECT t.service_id,"
      + " count(*) AS replicas FROM tasks t WHERE t.node_id = n.id AND t.service_id IS NOT NULL AND t.status IN "
      + ACTIVE_STATES + " GROUP BY t.service_id) s) AS service_replicas,"
      + " CASE WHEN n.drain_requested THEN EXISTS (SELECT 1 FROM tasks t WHERE t.node_id = n.id"
      + " AND t.status IN " + ACTIVE_STATES + ") ELSE false END AS draining";
  static final String NODES = "SELECT " + NODE_COLUMNS + " FROM nodes n ORDER BY n.id";
  static final String NODE_BY_ID = "SELECT " + NODE_COLUMNS + " FROM nodes n WHERE n.id = $1";
  static final String CARDS = "SELECT node_id, gpu_index, uuid, model, memory_total_mb, memory_used_mb,"
      + " utilization_percent, temperature_c, numa_node FROM cards WHERE ($1::text IS NULL OR node_id = $1)"
      + " ORDER BY node_id, gpu_index";
  /** Every active allocation with its tenant: the card use of the snapshot (or of one node). */
  static final String ACTIVE_ALLOCATIONS = "SELECT node_id, gpu_index, kind, memory_mb, tenant FROM allocations"
      + " WHERE active AND ($1::text IS NULL OR node_id = $1)";
  /**
   * Cards per node and model for the gauges and the fragmentation view (CardCounts), for the nodes after $1 in
   * id order, at most $2 of them (NULL: all). The range conditions let cards and allocations be read by index
   * for a page of nodes.
   */
  static final String CARD_COUNTS = "WITH page AS (SELECT n.id, n.gpu_vendor, n.status, n.gpu_total,"
      + " " + lastSign("n") + " AS last_heartbeat_at FROM nodes n WHERE n.id > $1 ORDER BY n.id LIMIT $2), last AS (SELECT max(id) AS id FROM page)"
      + " SELECT p.id, p.gpu_vendor, p.status, p.gpu_total, p.last_heartbeat_at, c.model,"
      + " count(c.gpu_index) AS total, count(u.gpu_index) AS used, count(c.gpu_index) FILTER (WHERE u.gpu_index IS NULL"
      + " AND NOT (c.memory_total_mb > 0 AND c.memory_used_mb * 100.0 / c.memory_total_mb >= "
      + NodeInfo.CARD_MEMORY_FULL_PERCENT + ")) AS free, coalesce(sum(u.shard_mb), 0) AS shard_mb"
      + " FROM page p LEFT JOIN cards c ON c.node_id = p.id AND c.node_id > $1 AND c.node_id <= (SELECT id FROM last)"
      + " LEFT JOIN (SELECT node_id, gpu_index, sum(memory_mb) FILTER (WHERE kind = 'shard') AS shard_mb"
      + " FROM allocations WHERE active AND node_id > $1 AND node_id <= (SELECT id FROM last)"
      + " GROUP BY node_id, gpu_index) u ON u.node_id = c.node_id AND u.gpu_index = c.gpu_index"
      + " GROUP BY p.id, p.gpu_vendor, p.status, p.gpu_total, p.last_heartbeat_at, c.model ORDER BY p.id";
  /** The scheduler's first read of a snapshot: every node's version (later reads take NODES_WRITTEN_SINCE). */
  static final String NODE_VERSIONS = "SELECT id, version FROM nodes";
  /**
   * The nodes some transaction wrote since a watermark: rows whose creating transaction (xmin) is at or after
   * the oldest transaction still running when the watermark was taken ($1, a 32-bit xid), compared by age
   * so the xid may wrap around. Freezing keeps a row's raw xmin, which is what the column shows (checked on
   * PostgreSQL 17: after VACUUM FREEZE moved relfrozenxid past a row's xmin, the column still showed it).
   * Row locks (FOR UPDATE) do not move xmin.
   */
  static final String NODES_WRITTEN_SINCE = "SELECT id, version FROM nodes WHERE age(xmin) <= age($1::text::xid)";
  /** The node count and the next watermark: the oldest transaction still running as this snapshot was taken. */
  static final String NODE_WATERMARK = "SELECT count(*) AS nodes, pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
      + " AS xmin FROM nodes";
  static final String NODES_AMONG = "SELECT " + NODE_COLUMNS + ", n.version FROM nodes n WHERE n.id = ANY($1)"
      + " ORDER BY n.id";
  static final String CARDS_AMONG = "SELECT node_id, gpu_index, uuid, model, memory_total_mb, memory_used_mb,"
      + " utilization_percent, temperature_c, numa_node FROM cards WHERE node_id = ANY($1) ORDER BY node_id, gpu_index";
  static final String REPEATABLE_READ = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";
  static final String SET_NODE_LOCATION = "UPDATE nodes SET region = $2, zone = $3, rack = $4, version = version + 1"
      + " WHERE id = $1 RETURNING id";
  /** Node administration (V6): cordon (and drain) bump the version, so the scheduler's snapshot reads the node. */
  static final String SET_NODE_CORDON = "UPDATE nodes SET cordoned = $2, drain_requested = $2 AND (drain_requested OR $3),"
      + " version = version + 1 WHERE id = $1 RETURNING id";
  /** Sets an admin's dedicated tenant when the node and the tenant (or null) exist; answers which of them do. */
  static final String SET_NODE_DEDICATED = "WITH known AS (SELECT $2::text IS NULL"
      + " OR EXISTS (SELECT 1 FROM tenants WHERE name = $2) AS tenant), set AS (UPDATE nodes"
      + " SET dedicated_tenant = $2, dedicated_by_admin = true, version = version + 1"
      + " WHERE id = $1 AND (SELECT tenant FROM known) RETURNING id)"
      + " SELECT (SELECT tenant FROM known) AS tenant_known, EXISTS (SELECT 1 FROM nodes WHERE id = $1) AS node_known";
  static final String ACTIVE_TASKS_ON_NODE = "SELECT id, status FROM tasks WHERE node_id = $1 AND status IN "
      + ACTIVE_STATES + " ORDER BY id";
  static final String SET_NODE_LABELS = "UPDATE nodes SET labels = $2, version = version + 1 WHERE id = $1 RETURNING id";

  // ---- plugin configuration
  static final String PLUGIN_CONFIGS = "SELECT name, enabled, weight, extra FROM plugin_config";
  static final String SEED_PLUGIN_CONFIG = "INSERT INTO plugin_config (name, enabled, weight, extra)"
      + " VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING";
  static final String UPSERT_PLUGIN_CONFIG = "INSERT INTO plugin_config (name, enabled, weight, extra)"
      + " VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET enabled = EXCLUDED.enabled,"
      + " weight = EXCLUDED.weight, extra = EXCLUDED.extra, version = plugin_config.version + 1, updated_at = now()";

  // ---- leadership: a term in PostgreSQL, elected and renewed with database time
  static final String ELECT_LEADER = "UPDATE leader SET term = term + 1, holder = $1,"
      + " lease_until = now() + make_interval(secs => $2)"
      + " WHERE id = 1 AND (holder IS NULL OR lease_until IS NULL OR lease_until < now()) RETURNING term";
  static final String RENEW_LEADER = "UPDATE leader SET lease_until = now() + make_interval(secs => $3)"
      + " WHERE id = 1 AND holder = $1 AND term = $2 AND lease_until >= now() RETURNING term";
  static final String RESIGN_LEADER = "UPDATE leader SET lease_until = now() WHERE id = 1 AND holder = $1 AND term = $2";
  /** The fence of every leader-only write: the writer's term is still the current, unexpired one. */
  static final String CHECK_FENCE = "SELECT term FROM leader WHERE id = 1 AND holder = $1 AND term = $2"
      + " AND lease_until >= now() FOR SHARE";
  static final String LEADER = "SELECT term, holder, lease_until, lease_until >= now() AS valid FROM leader WHERE id = 1";
  static final String SEEN_CONTROL_PLANE = "INSERT INTO control_planes (member_id, host, http_port) VALUES ($1, $2, $3)"
      + " ON CONFLICT (member_id) DO UPDATE SET last_seen = now()";
  static final String LIVE_CONTROL_PLANES = "SELECT member_id, host, http_port, started_at, last_seen FROM control_planes"
      + " WHERE last_seen > now() - make_interval(secs => $1) ORDER BY started_at";

  /**
   * What a preempted task's stop may take beyond the watchdog's 60 s (SPEC §6 counts the default 10 s grace in
   * them): its declared checkpoint timeout, and the part of its termination grace above 10 s.
   */
  static final String STOP_ALLOWANCE = "coalesce((spec->'checkpoint'->>'timeout_seconds')::float8, 0)"
      + " + greatest(0, coalesce((spec->>'termination_grace_seconds')::float8, 10) - 10)";

  // ---- preemption (PreemptionStore)
  /** Every active task on the nodes that hold a possible victim (scheduled or running) below priority $1. */
  static final String PREEMPTION_OCCUPANTS = "WITH candidate_nodes AS (SELECT DISTINCT node_id FROM tasks"
      + " WHERE preemptible AND status IN ('scheduled', 'running') AND (priority < $1 OR queue = ANY($2))"
      + " AND type NOT IN ('training', 'inference'))"
      + " SELECT t.id, t.node_id, t.tenant, t.type, t.priority, t.group_id, coalesce(t.borrowed_from, t.queue) AS queue,"
      + " (SELECT " + Sql.ALLOCATION_GPU_EQ + " FROM allocations a JOIN cards c ON c.node_id = a.node_id"
      + " AND c.gpu_index = a.gpu_index LEFT JOIN gpu_equivalents f ON f.model = c.model"
      + " WHERE a.task_id = t.id AND a.active) AS gpu_eq,"
      + " t.preemptible AND (t.group_id IS NULL OR NOT EXISTS (SELECT 1 FROM tasks m WHERE m.group_id = t.group_id"
      + " AND m.group_attempt = t.group_attempt AND NOT (m.preemptible AND m.status IN ('scheduled', 'running'))))"
      + " AS preemptible, t.status, t.created_at, t.started_at,"
      + " t.last_checkpoint_at, t.gpu_indices, t.shard, t.cpu_cores, t.memory_mb FROM tasks t"
      + " JOIN candidate_nodes c ON c.node_id = t.node_id WHERE t.status IN " + ACTIVE_STATES;
  /** The nominations the scheduler honours: of pending tasks, not expired. */
  static final String LIVE_NOMINATIONS = "SELECT t.id, t.priority, t.nominated_node, t.reason_message,"
      + " EXISTS (SELECT 1 FROM tasks v WHERE v.id = ANY(t.nominated_victims) AND v.status = 'preempting') AS waiting"
      + " FROM tasks t WHERE t.status = 'pending' AND t.nominated_node IS NOT NULL AND t.nominated_until > now()";
  /**
   * The victims of one plan, from the state each was planned in to preempting, all or none: each must still be on
   * the node (a member of a task group: anywhere, with every other member of its group in the plan too),
   * preemptible, of lower priority, scheduled or running. RETURNING their node, their state before and what their
   * stop may take (for the nomination's term).
   */
  static final String CAS_PREEMPT_VICTIMS = "WITH before AS (SELECT id, status FROM tasks WHERE id = ANY($1)"
      + " AND (node_id = $2 OR group_id IS NOT NULL) AND preemptible AND priority < $3"
      + " AND type NOT IN ('training', 'inference') AND status IN ('scheduled', 'running')"
      + " AND (group_id IS NULL OR NOT EXISTS (SELECT 1 FROM tasks m WHERE m.group_id = tasks.group_id"
      + " AND m.group_attempt = tasks.group_attempt AND m.id <> ALL($1))) FOR UPDATE)"
      + " UPDATE tasks t SET status = 'preempting', version = t.version + 1, preempting_since = now(),"
      + " reason_code = 'Preempting', reason_message = $4 FROM before WHERE t.id = before.id"
      + " RETURNING t.id, t.node_id, before.status AS from_status, " + STOP_ALLOWANCE + " AS allowance";
  /**
   * {@link #CAS_PREEMPT_VICTIMS} for a reclaim (SPEC §13): the victims may have any priority — they hold borrowed
   * capacity, and {@link ReclaimCheck} has checked the guarantees under the queues' locks in the same transaction.
   */
  static final String CAS_RECLAIM_VICTIMS = CAS_PREEMPT_VICTIMS.replace(" AND preemptible AND priority < $3",
      " AND preemptible AND $3::integer IS NOT NULL");
  /** What a reclaim plan's victims hold, in GPU-eq, by the queue their use is charged to. */
  static final String RECLAIM_VICTIM_USE = "SELECT " + Sql.CHARGED_QUEUE + " AS queue, (SELECT " + Sql.ALLOCATION_GPU_EQ
      + " FROM allocations a JOIN cards c ON c.node_id = a.node_id AND c.gpu_index = a.gpu_index"
      + " LEFT JOIN gpu_equivalents f ON f.model = c.model WHERE a.task_id = t.id AND a.active) AS gpu_eq"
      + " FROM tasks t WHERE t.id = ANY($1)";
  /** The preemptor, still pending, nominated to the node until $3 seconds from now. */
  static final String NOMINATE = "UPDATE tasks SET nominated_node = $2, nominated_until = now()"
      + " + make_interval(secs => $3), nominated_victims = $5, reason_code = 'PreemptionPending', reason_message = $4"
      + " WHERE id = $1 AND status = 'pending' RETURNING id";
  static final String INSERT_PREEMPTION_EVENTS = "INSERT INTO task_events (task_id, kind, from_status, to_status,"
      + " code, message) SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])";

  // ---- backlog recovery: active tasks whose node has been offline longer than the grace
  /** Tasks preempting for longer than $1 seconds: their agent has not confirmed the stop (preempt watchdog). */
  static final String OVERDUE_PREEMPTIONS = "SELECT id, node_id, preempting_since FROM tasks"
      + " WHERE status = 'preempting' AND preempting_since < now() - make_interval(secs => $1 + " + STOP_ALLOWANCE + ")"
      + " ORDER BY preempting_since";
  /** Active tasks on long-offline nodes, but not preempting ones: the preempt watchdog settles those. */
  static final String STRANDED_TASKS = "SELECT t.id, t.status FROM tasks t JOIN nodes n ON n.id = t.node_id"
      + " WHERE t.status IN ('scheduled', 'running', 'stopping') AND n.status = 'offline'"
      + " AND " + lastSign("n") + " < now() - make_interval(secs => $1)";

  static final String PENDING_BY_REASON_AND_BAND = "SELECT coalesce(reason_code, 'None') AS reason,"
      + " CASE WHEN priority >= 80 THEN 'high' WHEN priority >= 40 THEN 'normal' ELSE 'low' END AS band,"
      + " count(*) AS n FROM tasks WHERE status = 'pending' GROUP BY 1, 2";

  // ---- task groups (GroupStore): a group and its members of the current attempt
  static final String GROUP_COLUMNS = "id, tenant, name, type, gpu_type, parallelism, priority, status, member_count,"
      + " max_restarts, restart_count, reason_code, reason_message, master_node, master_addr, master_port, backend,"
      + " network_domains, ending, created_at, scheduled_at, finished_at, version, queue, estimated_start_at,"
      + " estimate_note, kind, desired_replicas, replica_spec, autoscale, windows, window_owns, replicas_before_window,"
      + " rebuilds, replicas_changed_at";
  static final String INSERT_GROUP = "INSERT INTO task_groups (id, tenant, name, type, gpu_type, parallelism, priority,"
      + " status, member_count, max_restarts, queue) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10)"
      + " RETURNING " + GROUP_COLUMNS;
  static final String INSERT_MEMBER = "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible,"
      + " gpu_required, gpu_memory_mb, gpu_type, spec, cpu_cores, memory_mb, group_id, group_rank, group_attempt,"
      + " queue) VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 0, $15)";
  /** The members of a new attempt: copies of the last attempt's, pending again (a group restart). */
  static final String INSERT_NEXT_ATTEMPT = "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible,"
      + " gpu_required, gpu_memory_mb, gpu_type, spec, cpu_cores, memory_mb, group_id, group_rank, group_attempt, queue)"
      + " SELECT gen_random_uuid(), tenant, name, type, 'pending', priority, preemptible, gpu_required, gpu_memory_mb,"
      + " gpu_type, spec, cpu_cores, memory_mb, group_id, group_rank, $2 + 1, queue FROM tasks"
      + " WHERE group_id = $1 AND group_attempt = $2 RETURNING id";
  static final String INSERT_CREATED_EVENTS = "INSERT INTO task_events (task_id, kind, to_status, message)"
      + " SELECT id, 'transition', 'pending', $2 FROM unnest($1::uuid[]) AS id";
  static final String GROUP_BY_ID = "SELECT " + GROUP_COLUMNS + " FROM task_groups WHERE id = $1";
  static final String GROUPS_FILTERED = "SELECT " + GROUP_COLUMNS + " FROM task_groups"
      + " WHERE ($1::text IS NULL OR tenant = $1) ORDER BY created_at DESC, id LIMIT $2";
  static final String MEMBERS_OF_GROUPS = "SELECT " + TASK_COLUMNS + " FROM tasks t WHERE group_id = ANY($1)"
      + " AND group_attempt = (SELECT restart_count FROM task_groups g WHERE g.id = t.group_id)"
      + " ORDER BY group_id, group_rank";
  /** The group queue, like the task queue: priority descending, then FIFO, continuing after a cursor. */
  static final String PENDING_GROUPS = "SELECT " + GROUP_COLUMNS + " FROM task_groups WHERE status = 'pending'"
      + " AND kind = 'gang'" + TENANT_ACTIVE
      + " AND ($1::integer IS NULL OR priority < $1 OR (priority = $1 AND (created_at, id) > ($2, $3)))"
      + " ORDER BY priority DESC, created_at, id LIMIT $4";
  static final String UNFINISHED_GROUPS = "SELECT " + GROUP_COLUMNS + " FROM task_groups"
      + " WHERE status IN ('scheduled', 'running', 'stopping') AND kind = 'gang' ORDER BY created_at, id LIMIT $1";
  /** The group's claim at its bind, the current attempt's: pending → scheduled, with where rank 0 listens. */
  static final String CAS_GROUP_BOUND = "UPDATE task_groups SET status = 'scheduled', master_node = $3, master_addr = $4,"
      + " master_port = $5, backend = $6, network_domains = $7, reason_code = NULL, reason_message = NULL,"
      + " scheduled_at = clock_timestamp(), version = version + 1 WHERE id = $1 AND status = 'pending'"
      + " AND restart_count = $2"
      + " RETURNING id";
  static final String SET_MEMBERS_DISTRIBUTED = "UPDATE tasks t SET distributed = d.wiring::jsonb"
      + " FROM unnest($1::uuid[], $2::text[]) AS d(id, wiring) WHERE t.id = d.id";
  /** A node's labels as placement sees them (admin labels win over the agent's, as in NODE_COLUMNS) and addresses. */
  static final String NODE_ADDRESSES = "SELECT id, gpu_vendor, agent_labels || labels AS labels, internal_ips, public_ips"
      + " FROM nodes WHERE id = ANY($1)";
  /** A pending group's reason, on the group and on each pending member, with a ledger entry when it changed. */
  static final String SET_GROUP_REASON = "WITH changed AS (UPDATE task_groups SET reason_code = $2, reason_message = $3"
      + " WHERE id = $1 AND status = 'pending' AND (reason_code IS DISTINCT FROM $2 OR reason_message IS DISTINCT FROM $3)"
      + " RETURNING id, restart_count), members AS (UPDATE tasks t SET reason_code = $2, reason_message = $3"
      + " FROM changed c WHERE t.group_id = c.id AND t.group_attempt = c.restart_count AND t.status = 'pending'"
      + " RETURNING t.id) INSERT INTO task_events (task_id, kind, code, message)"
      + " SELECT id, 'unschedulable', $2, $3 FROM members";
  /** Any move of a group, CAS on its version; the ending and reason are kept unless given. */
  static final String CAS_GROUP_STATUS = "UPDATE task_groups SET status = $3, version = version + 1,"
      + " ending = CASE WHEN $3 = 'pending' THEN NULL ELSE COALESCE($4, ending) END,"
      + " reason_code = CASE WHEN $5::text IS NULL THEN reason_code ELSE $5 END,"
      + " reason_message = CASE WHEN $5::text IS NULL THEN reason_message ELSE $6 END,"
      + " restart_count = restart_count + CASE WHEN $3 = 'pending' THEN 1 ELSE 0 END,"
      + " master_node = CASE WHEN $3 = 'pending' THEN NULL ELSE master_node END,"
      + " master_addr = CASE WHEN $3 = 'pending' THEN NULL ELSE master_addr END,"
      + " master_port = CASE WHEN $3 = 'pending' THEN NULL ELSE master_port END,"
      + " scheduled_at = CASE WHEN $3 = 'pending' THEN NULL ELSE scheduled_at END,"
      + " finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'stopped') THEN now() ELSE finished_at END"
      + " WHERE id = $1 AND version = $2 RETURNING " + GROUP_COLUMNS;
  /** A preempted group back in the queue as a unit: the same attempt (its members were requeued), no restart used. */
  static final String CAS_GROUP_PREEMPTED = "UPDATE task_groups SET status = 'pending', version = version + 1,"
      + " reason_code = $3, reason_message = $4, master_node = NULL, master_addr = NULL, master_port = NULL,"
      + " backend = NULL, network_domains = NULL, scheduled_at = NULL WHERE id = $1 AND version = $2"
      + " AND status IN ('scheduled', 'running') RETURNING " + GROUP_COLUMNS;
  /** Every pending member of the group's current attempt stopped at once (a stop of a group that waits). */
  static final String STOP_PENDING_MEMBERS = "WITH stopped AS (UPDATE tasks SET status = 'stopped', version = version + 1,"
      + " finished_at = now(), reason_code = $3, reason_message = $4 WHERE group_id = $1 AND group_attempt = $2"
      + " AND status = 'pending' RETURNING id) INSERT INTO task_events (task_id, kind, from_status, to_status, code,"
      + " message) SELECT id, 'transition', 'pending', 'stopped', $3, $4 FROM stopped";

  // ---- queues and GPU-equivalents (QueueStore)
  static final String QUEUE_COLUMNS = "name, parent, weight, guaranteed, max_gpu_eq, max_cards_per_task, max_running,"
      + " tenants, created_at, version";
  static final String QUEUES = "SELECT " + QUEUE_COLUMNS + " FROM queues ORDER BY created_at, name";
  static final String LOCK_QUEUES = "SELECT " + QUEUE_COLUMNS + " FROM queues ORDER BY name FOR UPDATE";
  /** A new queue is empty: with a guarantee, it is idle from the start (the borrow patrol keeps it after). */
  static final String INSERT_QUEUE = "INSERT INTO queues (name, parent, weight, guaranteed, max_gpu_eq,"
      + " max_cards_per_task, max_running, tenants, idle_since) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
      + " CASE WHEN $4::float8 > 0 THEN now() END)"
      + " ON CONFLICT (name) DO NOTHING RETURNING " + QUEUE_COLUMNS;
  static final String UPDATE_QUEUE = "UPDATE queues SET parent = $2, weight = $3, guaranteed = $4, max_gpu_eq = $5,"
      + " max_cards_per_task = $6, max_running = $7, tenants = $8, version = version + 1 WHERE name = $1"
      + " RETURNING " + QUEUE_COLUMNS;
  /** What still lives in a queue: child queues, and tasks or groups that have not ended. */
  static final String QUEUE_CONTENTS = "SELECT (SELECT count(*) FROM queues WHERE parent = $1) AS children,"
      + " (SELECT count(*) FROM tasks WHERE queue = $1 AND status NOT IN ('succeeded', 'failed', 'stopped')) AS tasks,"
      + " (SELECT count(*) FROM task_groups WHERE queue = $1 AND status NOT IN ('succeeded', 'failed', 'stopped'))"
      + " AS groups";
  static final String REHOME_ENDED_TASKS = "UPDATE tasks SET queue = $2 WHERE queue = $1";
  static final String REHOME_ENDED_GROUPS = "UPDATE task_groups SET queue = $2 WHERE queue = $1";
  static final String DELETE_QUEUE = "DELETE FROM queues WHERE name = $1 AND name <> 'root'";
  static final String GPU_EQUIVALENTS = "SELECT model, factor FROM gpu_equivalents ORDER BY model";
  static final String CLEAR_GPU_EQUIVALENTS = "DELETE FROM gpu_equivalents";
  static final String INSERT_GPU_EQUIVALENTS = "INSERT INTO gpu_equivalents (model, factor)"
      + " SELECT * FROM unnest($1::text[], $2::float8[])";
  /** Each queue's own active use: GPU-equivalents (whole cards by their model's factor, shards by memory share). */
  /** One active allocation in GPU-equivalents (a whole card its model's factor, a shard its memory's share). */
  private static final String ALLOCATION_GPU_EQ = "sum(coalesce(f.factor, 1.0) * CASE WHEN a.kind = 'whole' THEN 1.0"
      + " ELSE a.memory_mb::float8 / greatest(c.memory_total_mb, 1) END) AS gpu_eq";
  private static final String ALLOCATIONS_WITH_FACTORS = " JOIN allocations a ON a.task_id = t.id AND a.active"
      + " JOIN cards c ON c.node_id = a.node_id AND c.gpu_index = a.gpu_index"
      + " LEFT JOIN gpu_equivalents f ON f.model = c.model";
  /**
   * The queue a task's GPU-equivalents are charged to: its lender's while it runs on borrowed capacity (training
   * borrow, V15), else its own.
   */
  static final String CHARGED_QUEUE = "coalesce(t.borrowed_from, t.queue)";
  static final String QUEUE_USAGE = "SELECT " + CHARGED_QUEUE + " AS queue, " + ALLOCATION_GPU_EQ + " FROM tasks t"
      + ALLOCATIONS_WITH_FACTORS + " GROUP BY 1";
  static final String IDLE_QUEUES = "SELECT name, idle_since FROM queues WHERE idle_since IS NOT NULL";
  /** Training borrow in GPU-eq: per borrowing queue and lender, the active tasks' use (GET /api/v1/queues). */
  static final String QUEUE_LENDING = "SELECT t.queue, t.borrowed_from, " + ALLOCATION_GPU_EQ + " FROM tasks t"
      + ALLOCATIONS_WITH_FACTORS + " WHERE t.borrowed_from IS NOT NULL GROUP BY t.queue, t.borrowed_from";
  /**
   * The borrow patrol: every queue but root whose subtree's own use (lent capacity aside) is below its guarantee
   * keeps (or starts) its idle_since; every other loses it. RETURNING the rows it changed.
   */
  static final String MARK_IDLE_QUEUES = "WITH RECURSIVE down(name, top) AS (SELECT name, name FROM queues"
      + " UNION ALL SELECT q.name, d.top FROM queues q JOIN down d ON q.parent = d.name),"
      + " own AS (SELECT t.queue, " + ALLOCATION_GPU_EQ + " FROM tasks t" + ALLOCATIONS_WITH_FACTORS
      + " WHERE t.borrowed_from IS NULL GROUP BY t.queue),"
      + " sub AS (SELECT d.top AS name, coalesce(sum(o.gpu_eq), 0) AS gpu_eq FROM down d LEFT JOIN own o"
      + " ON o.queue = d.name GROUP BY d.top),"
      + " target AS (SELECT q.name, CASE WHEN q.name <> 'root' AND q.guaranteed > 0 AND s.gpu_eq < q.guaranteed - 1e-9"
      + " THEN coalesce(q.idle_since, now()) END AS idle_since FROM queues q JOIN sub s ON s.name = q.name)"
      + " UPDATE queues q SET idle_since = target.idle_since FROM target WHERE q.name = target.name"
      + " AND q.idle_since IS DISTINCT FROM target.idle_since RETURNING q.name, q.idle_since";
  /** Training tasks waiting on their queue's quota that a lender idle long enough ($1 seconds) might take. */
  static final String TRAINING_WAITING_TO_BORROW = "SELECT id FROM tasks WHERE status = 'pending' AND type = 'training'"
      + " AND reason_code = 'QuotaExceeded' AND EXISTS (SELECT 1 FROM queues l WHERE l.idle_since"
      + " <= now() - make_interval(secs => $1) AND l.name <> tasks.queue) ORDER BY priority DESC, created_at LIMIT 1000";
  static final String QUEUE_COUNTS = "SELECT queue, count(*) FILTER (WHERE status IN " + ACTIVE_STATES + ") AS active,"
      + " count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'running') AS running"
      + " FROM tasks"
      + " WHERE status IN ('pending', 'scheduled', 'running', 'stopping', 'preempting') GROUP BY queue";

  /** The queues of these tasks and all their ancestors, with their limits (QuotaCheck). */
  static final String QUEUE_CHAINS = "WITH RECURSIVE up(name) AS (SELECT DISTINCT queue FROM tasks WHERE id = ANY($1)"
      + " UNION SELECT q.parent FROM queues q JOIN up ON q.name = up.name WHERE q.parent IS NOT NULL)"
      + " SELECT q.name, q.parent, q.max_gpu_eq, q.max_running, q.idle_since IS NOT NULL AS lending"
      + " FROM queues q JOIN up ON up.name = q.name";
  /** The queues a training task over its quota may borrow from: idle at least $1 seconds (not locked yet). */
  static final String LENDER_CANDIDATES = "SELECT name FROM queues WHERE guaranteed > 0 AND name <> 'root'"
      + " AND idle_since <= now() - make_interval(secs => $1)";
  /** The quota's queues locked in name order, with whether each has been idle at least $2 seconds. */
  static final String LOCK_QUOTA_QUEUES = "SELECT name, guaranteed, idle_since IS NOT NULL"
      + " AND idle_since <= now() - make_interval(secs => $2) AS idle FROM queues WHERE name = ANY($1)"
      + " ORDER BY name FOR UPDATE";
  /** Each queue's own use in GPU-eq, lent capacity aside: what is left of its guarantee to lend. */
  static final String QUEUE_OWN_USAGE_OF = "SELECT t.queue, " + ALLOCATION_GPU_EQ + " FROM tasks t"
      + ALLOCATIONS_WITH_FACTORS + " WHERE t.queue = ANY($1) AND t.borrowed_from IS NULL AND t.status IN "
      + ACTIVE_STATES + " GROUP BY t.queue";
  /** What each lender has lent: its borrowers' use in GPU-eq. */
  static final String QUEUE_LENT_OF = "SELECT t.borrowed_from AS queue, " + ALLOCATION_GPU_EQ + " FROM tasks t"
      + ALLOCATIONS_WITH_FACTORS + " WHERE t.borrowed_from = ANY($1) AND t.status IN " + ACTIVE_STATES
      + " GROUP BY t.borrowed_from";
  static final String LOCK_QUEUES_NAMED = "SELECT name FROM queues WHERE name = ANY($1) ORDER BY name FOR UPDATE";
  /** Every queue below each of $1 (itself included), as (queue, top) pairs. */
  static final String QUEUE_SUBTREES = "WITH RECURSIVE down(name, top) AS (SELECT name, name FROM queues"
      + " WHERE name = ANY($1) UNION ALL SELECT q.name, d.top FROM queues q JOIN down d ON q.parent = d.name)"
      + " SELECT name, top FROM down";
  static final String QUEUE_USAGE_OF = "SELECT " + CHARGED_QUEUE + " AS queue, " + ALLOCATION_GPU_EQ + " FROM tasks t"
      + ALLOCATIONS_WITH_FACTORS + " WHERE " + CHARGED_QUEUE + " = ANY($1) AND t.status IN " + ACTIVE_STATES
      + " GROUP BY 1";
  static final String QUEUE_ACTIVE_OF = "SELECT queue, count(*) AS active FROM tasks WHERE queue = ANY($1)"
      + " AND status IN " + ACTIVE_STATES + " GROUP BY queue";

  /**
   * What waits ahead of a newcomer of priority $2 in queue $1 (POST /api/v1/tasks/explain): its pending single tasks
   * and pending groups of a higher priority, or of the same priority (created earlier than anything arriving now).
   */
  static final String QUEUE_AHEAD = "SELECT (SELECT count(*) FROM tasks WHERE status = 'pending' AND group_id IS NULL"
      + " AND queue = $1 AND priority >= $2) AS tasks, (SELECT count(*) FROM task_groups WHERE status = 'pending'"
      + " AND queue = $1 AND priority >= $2) AS groups";

  static final String HEALTH = "SELECT 1";

  // ---- fair share between queues (PlanStore)
  /** Each queue's own active use of the three resources shares are measured in: GPU-equivalents, CPU, memory. */
  static final String QUEUE_SHARES = "SELECT q.queue, coalesce(u.gpu_eq, 0) AS gpu_eq, q.cpu, q.memory FROM"
      + " (SELECT queue, sum(cpu_cores) AS cpu, sum(memory_mb) AS memory FROM tasks WHERE status IN " + ACTIVE_STATES
      + " GROUP BY queue) q LEFT JOIN (" + QUEUE_USAGE + ") u ON u.queue = q.queue";
  /** The first $1 pending single tasks of every queue, in queue order (so each queue's head is in every round). */
  static final String QUEUE_HEADS = "SELECT " + TASK_COLUMNS + " FROM (SELECT t.* FROM queues q CROSS JOIN LATERAL"
      + " (SELECT * FROM tasks WHERE queue = q.name AND status = 'pending' AND group_id IS NULL" + TENANT_ACTIVE
      + " ORDER BY priority DESC, created_at, id LIMIT $1) t) h";

  // ---- inference services (ServiceStore): a group of kind service, its replicas in slots
  static final String INSERT_SERVICE = "INSERT INTO task_groups (id, tenant, name, type, gpu_type, priority, status,"
      + " member_count, max_restarts, queue, kind, desired_replicas, replica_spec, autoscale, windows, window_owns,"
      + " replicas_before_window, replicas_changed_at, scheduled_at) VALUES ($1, $2, $3, 'inference', $4, $5, 'running',"
      + " $6, 0, $7, 'service', $11, $8, $9, $10, $12, $13, now(), now()) RETURNING " + GROUP_COLUMNS;
  /** Running services with whether their tenant is active (an inactive tenant's service gains no replicas). */
  static final String RUNNING_SERVICES = "SELECT " + GROUP_COLUMNS + ", (SELECT active FROM tenants"
      + " WHERE name = g.tenant) AS tenant_active FROM task_groups g WHERE kind = 'service' AND status = 'running'"
      + " ORDER BY created_at, id LIMIT $1";
  static final String SERVICE_BY_ID = "SELECT " + GROUP_COLUMNS + ", (SELECT active FROM tenants"
      + " WHERE name = g.tenant) AS tenant_active FROM task_groups g WHERE id = $1 AND kind = 'service'";
  /** Every slot of the services with its latest replica (null columns when the insert of it never committed). */
  static final String SERVICE_SLOTS = "SELECT s.service_id, s.slot, s.generation, s.failures, t.id AS task_id,"
      + " t.status, t.node_id, n.status AS node_status, t.created_at, t.started_at, t.finished_at, t.reason_code,"
      + " t.reason_message, t.exit_code, t.host_port, t.gpu_indices FROM replica_slots s LEFT JOIN tasks t"
      + " ON t.service_id = s.service_id AND t.replica_slot = s.slot AND t.replica_generation = s.generation"
      + " LEFT JOIN nodes n ON n.id = t.node_id WHERE s.service_id = ANY($1) ORDER BY s.service_id, s.slot";
  /**
   * The slot's move to generation $3 (from $3 - 1, or created at 0): the CAS that makes a rebuild happen once,
   * whoever runs it.
   */
  static final String ADVANCE_SLOT = "INSERT INTO replica_slots (service_id, slot, generation, failures)"
      + " VALUES ($1, $2, $3, $4) ON CONFLICT (service_id, slot) DO UPDATE SET generation = EXCLUDED.generation,"
      + " failures = EXCLUDED.failures WHERE replica_slots.generation = EXCLUDED.generation - 1 RETURNING slot";
  /**
   * A replica of slot $3, generation $4, made from the service row alone, labelled with the service; only while the
   * service runs and wants the slot (one_live_replica_per_slot refuses a second live one).
   */
  static final String INSERT_REPLICA = "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible,"
      + " gpu_required, gpu_memory_mb, gpu_type, spec, cpu_cores, memory_mb, queue, service_id, replica_slot,"
      + " replica_generation) SELECT $1, g.tenant, (g.replica_spec->>'name') || '-' || $3::integer, 'inference', 'pending',"
      + " g.priority, (g.replica_spec->>'preemptible')::boolean, (g.replica_spec->>'gpu_required')::integer,"
      + " (g.replica_spec->>'gpu_memory_mb')::bigint, g.replica_spec->>'gpu_type',"
      + " jsonb_set(g.replica_spec->'spec', '{labels}', coalesce(g.replica_spec->'spec'->'labels', '{}'::jsonb)"
      + " || jsonb_build_object('" + ServiceSpec.SERVICE_LABEL + "', g.id::text)),"
      + " (g.replica_spec->>'cpu_cores')::double precision, (g.replica_spec->>'memory_mb')::bigint, g.queue, g.id,"
      + " $3::integer, $4::integer FROM task_groups g WHERE g.id = $2 AND g.kind = 'service' AND g.status = 'running'"
      + " AND $3::integer < g.desired_replicas RETURNING id";
  static final String COUNT_REBUILD = "UPDATE task_groups SET rebuilds = rebuilds + 1 WHERE id = $1";
  /** The desired count (and who owns it) by CAS on the version read; replicas_changed_at moves when the count does. */
  static final String CAS_SERVICE_REPLICAS = "UPDATE task_groups SET replicas_changed_at = CASE WHEN desired_replicas"
      + " <> $3 THEN now() ELSE replicas_changed_at END, desired_replicas = $3, window_owns = $4,"
      + " replicas_before_window = $5, version = version + 1 WHERE id = $1 AND version = $2 AND kind = 'service'"
      + " AND status = 'running' RETURNING " + GROUP_COLUMNS;
  static final String CAS_SERVICE_STOPPED = "UPDATE task_groups SET status = 'stopped', reason_code = $3,"
      + " reason_message = $4, finished_at = now(), version = version + 1 WHERE id = $1 AND version = $2"
      + " AND kind = 'service' AND status = 'running' RETURNING " + GROUP_COLUMNS;
  static final String LIVE_REPLICAS = "SELECT id, status, node_id FROM tasks WHERE service_id = $1"
      + " AND status IN ('pending', 'scheduled', 'running')";
  static final String INSERT_GROUP_EVENT = "INSERT INTO group_events (group_id, kind, message, details)"
      + " VALUES ($1, $2, $3, $4)";
  static final String GROUP_EVENTS = "SELECT at, kind, message, details FROM group_events WHERE group_id = $1"
      + " ORDER BY id DESC LIMIT $2";
  /**
   * One sample per service: the mean utilisation now of the cards its running replicas hold, as heartbeats last
   * wrote them (services whose replicas hold no card get none).
   */
  static final String SAMPLE_SERVICE_UTILIZATION = "INSERT INTO service_utilization (service_id, sampled_at,"
      + " mean_percent, cards) SELECT t.service_id, now(), avg(c.utilization_percent), count(*) FROM tasks t"
      + " JOIN allocations a ON a.task_id = t.id AND a.active JOIN cards c ON c.node_id = a.node_id"
      + " AND c.gpu_index = a.gpu_index WHERE t.service_id = ANY($1) AND t.status = 'running' GROUP BY t.service_id"
      + " ON CONFLICT DO NOTHING";
  static final String PRUNE_UTILIZATION = "DELETE FROM service_utilization WHERE sampled_at < now() - interval '10 min'";
  /**
   * Per service, the card-weighted mean of the samples of the last $2 seconds taken after its replica count last
   * changed, and how many there are.
   */
  static final String UTILIZATION_WINDOW = "SELECT g.id AS service_id, sum(u.mean_percent * u.cards)"
      + " / nullif(sum(u.cards), 0) AS mean, count(*) AS samples FROM task_groups g JOIN service_utilization u"
      + " ON u.service_id = g.id AND u.sampled_at > greatest(now() - make_interval(secs => $2),"
      + " coalesce(g.replicas_changed_at, '-infinity'::timestamptz)) WHERE g.id = ANY($1) GROUP BY g.id";
  /**
   * Per running service (by tenant and name), its desired replicas and those running in a wanted slot (as the
   * service's status counts them): the heteroflow_service_replicas gauge.
   */
  static final String SERVICE_REPLICA_COUNTS = "SELECT g.tenant, g.name, sum(g.desired_replicas)::bigint AS desired,"
      + " sum((SELECT count(*) FROM tasks t WHERE t.service_id = g.id AND t.status = 'running'"
      + " AND t.replica_slot < g.desired_replicas))::bigint AS running FROM task_groups g WHERE g.kind = 'service'"
      + " AND g.status = 'running' GROUP BY g.tenant, g.name";
}
