package io.heteroflow.bench;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every SQL statement the benchmark itself runs, by name, in one place (the control plane's own statements
 * are in verticles' {@code Sql}). A task name is always a parameter; only what PostgreSQL cannot take as one
 * (a database name, a setting, a table to vacuum) is spliced in, and only from the benchmark's own constants.
 */
final class BenchSql {
  private BenchSql() {}

  // --- the raw two-row bind transaction (RawPgBench) -------------------------------------------------------

  /** The bind's task compare-and-set: $1 task id, $2 node id. */
  static final String RAW_BIND_TASK = "UPDATE tasks SET status = 'scheduled', version = version + 1, node_id = $2,"
      + " scheduled_at = now() WHERE id = $1 AND status = 'pending'";
  /** The bind's node capacity check and update: $1 node id. */
  static final String RAW_BIND_NODE = "UPDATE nodes SET gpu_used = gpu_used + 1, version = version + 1"
      + " WHERE id = $1 AND gpu_used + 1 <= gpu_total";
  /** What LeaderStore.checkFence adds to every bind: a share lock on the single leader row. */
  static final String RAW_BIND_FENCE = "SELECT term FROM leader WHERE id = 1 FOR SHARE";
  /** $1 scratch nodes raw-00000… with a huge gpu_total, so every raw bind succeeds. */
  static final String RAW_INSERT_NODES = "INSERT INTO nodes (id, gpu_vendor, gpu_total, cpu_cores, memory_total_gb)"
      + " SELECT 'raw-' || lpad(g::text, 5, '0'), 'nvidia', 1000000000, 128, 1024 FROM generate_series(0, $1::int - 1) g";
  /** $1 pending scratch tasks. */
  static final String RAW_INSERT_PENDING = "INSERT INTO tasks (id, tenant, name, type, status, priority, spec)"
      + " SELECT gen_random_uuid(), 'default', 'raw', 'job', 'pending', 50, '{}'::jsonb FROM generate_series(1, $1::bigint)";
  static final String NODE_IDS = "SELECT id FROM nodes ORDER BY id";
  static final String PENDING_TASK_IDS = "SELECT id FROM tasks WHERE status = 'pending'";
  /** The server process of this connection (its parent is the postmaster). */
  static final String BACKEND_PID = "SELECT pg_backend_pid() AS pid";

  // --- the benchmark's tasks (TaskRows, Drain, WarmUpAndHalfLoad, MeasuredBurst) ----------------------------

  /** One chunk of the burst, tasks and their "created" events in one statement: nine parallel arrays. */
  static final String INSERT_TASKS = "WITH created AS ("
      + "INSERT INTO tasks (id, tenant, name, type, status, priority, preemptible, gpu_required, gpu_memory_mb, spec,"
      + " cpu_cores, memory_mb)"
      + " SELECT u.id, 'default', u.name, u.type, 'pending', u.priority, u.preemptible, u.gpu, u.gpu_memory,"
      + " u.spec::jsonb, u.cpu, u.memory FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[],"
      + " $6::bigint[], $7::text[], $8::float8[], $9::bigint[], $10::boolean[])"
      + " AS u(id, name, type, priority, gpu, gpu_memory, spec, cpu, memory, preemptible)"
      + " RETURNING id)"
      + " INSERT INTO task_events (task_id, kind, from_status, to_status, message)"
      + " SELECT id, 'transition', NULL, 'pending', 'created' FROM created";
  /** The tasks named $1 that still hold or wait for cards. */
  static final String UNRELEASED_TASKS = "SELECT id, status FROM tasks WHERE name = $1"
      + " AND status IN ('pending', 'scheduled')";
  /** Pending and bound counts of the tasks named $1. */
  static final String DRAIN_PROGRESS = "SELECT count(*) FILTER (WHERE status = 'pending') AS pending,"
      + " count(*) FILTER (WHERE status <> 'pending') AS bound FROM tasks WHERE name = $1";
  /** Why the pending tasks named $1 wait: the five most common reasons. */
  static final String STALL_REASONS = "SELECT coalesce(reason_code, '(none)') AS code,"
      + " coalesce(min(reason_message), '') AS message, count(*) AS n, min(priority) AS priority,"
      + " min(gpu_required) AS gpus, min(gpu_memory_mb) AS gpu_mb"
      + " FROM tasks WHERE name = $1 AND status = 'pending' GROUP BY 1 ORDER BY 3 DESC LIMIT 5";
  /** Bound count, drain time and create→scheduled quantiles of the tasks named $2; $1 the kick's time. */
  static final String DRAIN_FIGURES = "SELECT count(*) FILTER (WHERE status <> 'pending') AS bound,"
      + " extract(epoch FROM max(scheduled_at) - min(created_at))::float8 AS drain,"
      + " extract(epoch FROM max(scheduled_at) - $1)::float8 AS after_kick,"
      + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
      + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99,"
      + " max(extract(epoch FROM scheduled_at - created_at))::float8 AS max"
      + " FROM tasks WHERE name = $2";
  /** The same quantiles per kind (1/2/4/8-card, fractional) of the tasks named $1. */
  static final String DRAIN_BY_KIND = "SELECT CASE WHEN gpu_required > 0 THEN gpu_required || '-card'"
      + " ELSE 'fractional' END AS kind, count(*) AS n, count(scheduled_at) AS bound,"
      + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p50,"
      + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM scheduled_at - created_at)))::float8 AS p99"
      + " FROM tasks WHERE name = $1 GROUP BY 1 ORDER BY 1";
  /** When each task named $1 was bound, in order. */
  static final String BIND_TIMES = "SELECT extract(epoch FROM scheduled_at)::float8 AS t FROM tasks"
      + " WHERE name = $1 AND scheduled_at IS NOT NULL ORDER BY scheduled_at";
  /** How many tasks named $1 are scheduled and over how many seconds since the first was created. */
  static final String SCHEDULED_RATE = "SELECT count(*) AS n,"
      + " extract(epoch FROM max(scheduled_at) - min(created_at))::float8 AS s"
      + " FROM tasks WHERE name = $1 AND status = 'scheduled'";
  /** The bound tasks named $1 and when. */
  static final String SCHEDULED_AT = "SELECT id, scheduled_at FROM tasks WHERE name = $1 AND scheduled_at IS NOT NULL";
  /** The server's clock now (not the transaction's start). */
  static final String CLOCK = "SELECT clock_timestamp() AS t";
  /** The cheapest round trip. */
  static final String SELECT_ONE = "SELECT 1";
  /** The tables autovacuum would have analysed by now in a long-running cluster. */
  static final List<String> VACUUMED_TABLES = List.of("tasks", "nodes", "cards", "allocations", "task_events",
      "gpu_ledger");

  static String vacuumAnalyze(String table) {
    return "VACUUM ANALYZE " + table;
  }

  // --- PostgreSQL's statistics views (PgStatistics) ----------------------------------------------------------

  static final String CREATE_STATEMENT_STATISTICS = "CREATE EXTENSION IF NOT EXISTS pg_stat_statements";
  static final String RESET_STATEMENT_STATISTICS = "SELECT pg_stat_statements_reset()";
  /** This database's 16 statements with the most server execution time. */
  static final String TOP_STATEMENTS = "SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query, calls,"
      + " total_exec_time, mean_exec_time, rows FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database"
      + " WHERE datname = current_database()) ORDER BY total_exec_time DESC LIMIT 16";
  /** Makes the next statistics read see fresh counters. */
  static final String CLEAR_STATISTICS_SNAPSHOT = "SELECT pg_stat_clear_snapshot()";
  static final String TRANSACTIONS = "SELECT xact_commit, xact_rollback FROM pg_stat_database"
      + " WHERE datname = current_database()";

  // --- databases on the server (BenchDatabases, over JDBC) ---------------------------------------------------

  static String createDatabase(String name) {
    return "CREATE DATABASE " + name;
  }

  static String dropDatabase(String name) {
    return "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)";
  }

  static String show(String setting) {
    return "SHOW " + setting;
  }

  // --- what must hold after a run (Invariants): each a count of offending rows that must be zero --------------

  private static final String ACTIVE = "('scheduled', 'running', 'stopping', 'preempting')";

  /** Invariant checks by what a non-zero count means. */
  // ---- bench --scenario preempt (PreemptionBench)
  /** The fill, bound by the scheduler, marked running in one statement as if every agent had claimed it. */
  static final String MARK_FILL_RUNNING = "UPDATE tasks SET status = 'running', started_at = now(), version = version + 1"
      + " WHERE name = 'fill' AND status = 'scheduled'";
  static final String COUNT_BY_NAME_AND_STATUS = "SELECT count(*) FROM tasks WHERE name = $1 AND status = $2";
  static final String PREEMPTOR_LATENCY = "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,"
      + " percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99, max(ms) AS max FROM (SELECT"
      + " extract(epoch FROM scheduled_at - created_at) * 1000 AS ms FROM tasks WHERE name = 'preemptor') x";
  /**
   * The plans the preemptors made (their PreemptionPending ledger entries name the victim count), against the
   * minimal set on a node full of one-card jobs: exactly the preemptor's card count.
   */
  static final String VICTIMS_PER_PLAN = "WITH plans AS (SELECT t.id, t.gpu_required,"
      + " substring(e.message FROM ', ([0-9]+) victim')::int AS n FROM task_events e JOIN tasks t ON t.id = e.task_id"
      + " WHERE e.kind = 'preemption' AND t.name = 'preemptor')"
      + " SELECT count(*) AS plans, count(DISTINCT id) AS planners, coalesce(sum(n), 0) AS victims,"
      + " coalesce(avg(n), 0)::float8 AS mean, count(*) FILTER (WHERE n > gpu_required) AS over,"
      + " count(*) FILTER (WHERE n < gpu_required) AS under,"
      + " (SELECT count(*) FROM tasks WHERE name = 'fill' AND preempt_count > 0) AS requeued,"
      + " (SELECT count(*) FROM task_events WHERE to_status = 'preempting') AS preempting_transitions FROM plans";

  // ---- bench --scenario gangs (GangBench, GangFigures)
  /** The groups with some members bound and some pending: must never answer a row (one transaction binds a group). */
  static final String PARTIAL_GROUPS = "SELECT group_id FROM tasks WHERE group_id IS NOT NULL GROUP BY group_id"
      + " HAVING count(*) FILTER (WHERE status='pending') > 0 AND count(*) FILTER (WHERE status<>'pending') > 0";
  /**
   * The groups named $1, each with when it was bound: its members' scheduled_at (set as the bind is about to commit,
   * like a single task's; the group's own is the bind transaction's start), null while it waits.
   */
  private static final String GROUP_BINDS = "WITH b AS (SELECT g.id, g.created_at, g.member_count, CASE WHEN"
      + " g.status <> 'pending' THEN max(t.scheduled_at) END AS bound_at FROM task_groups g JOIN tasks t"
      + " ON t.group_id = g.id AND t.group_attempt = g.restart_count WHERE g.name = $1 GROUP BY g.id)";
  /**
   * How many groups named $1, how many bound, seconds from the first task's submit (the earliest created_at of
   * the tasks named $1, singles and members alike) to the last group's bind, and each group's submit→scheduled.
   */
  static final String GROUP_FIGURES = GROUP_BINDS + ", first AS (SELECT min(created_at) AS t0 FROM tasks WHERE name = $1)"
      + " SELECT count(*) AS groups, count(bound_at) AS bound, coalesce(sum(member_count) FILTER (WHERE"
      + " bound_at IS NOT NULL), 0) AS members_bound,"
      + " extract(epoch FROM max(bound_at) - (SELECT t0 FROM first))::float8 AS total,"
      + " extract(epoch FROM max(created_at) - (SELECT t0 FROM first))::float8 AS last_created,"
      + " extract(epoch FROM min(bound_at) - (SELECT t0 FROM first))::float8 AS first_bound,"
      + " (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM bound_at - created_at)))::float8 AS p50,"
      + " (percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM bound_at - created_at)))::float8 AS p99,"
      + " max(extract(epoch FROM bound_at - created_at))::float8 AS max FROM b";
  /** When each group named $1 was bound, in seconds since the first task's submit, in order. */
  static final String GROUP_BIND_TIMES = GROUP_BINDS + ", first AS (SELECT min(created_at) AS t0 FROM tasks"
      + " WHERE name = $1) SELECT extract(epoch FROM bound_at - (SELECT t0 FROM first))::float8 AS t FROM b"
      + " WHERE bound_at IS NOT NULL ORDER BY 1";
  /** Single tasks (no group) named $1: how many bound, and seconds from the first submit to the last single's bind. */
  static final String SINGLE_FIGURES = "SELECT count(scheduled_at) FILTER (WHERE group_id IS NULL) AS bound,"
      + " extract(epoch FROM max(scheduled_at) FILTER (WHERE group_id IS NULL) - min(created_at))::float8 AS s"
      + " FROM tasks WHERE name = $1";
  /** Where the placed groups named $1 landed: racks per group, against the fewest the largest rack allows. */
  static final String GROUP_SPREAD = "WITH placed AS (SELECT t.group_id, count(*) AS members,"
      + " count(DISTINCT (n.region, n.zone, n.rack)) AS racks, count(DISTINCT n.id) AS nodes FROM tasks t"
      + " JOIN task_groups g ON g.id = t.group_id JOIN nodes n ON n.id = t.node_id WHERE g.name = $1"
      + " AND t.status <> 'pending' GROUP BY 1), rack AS (SELECT max(c) AS size FROM (SELECT count(*) AS c FROM nodes"
      + " GROUP BY region, zone, rack, gpu_vendor) x)"
      + " SELECT coalesce(avg(racks), 0)::float8 AS racks_mean, coalesce(avg(nodes), 0)::float8 AS nodes_mean,"
      + " count(*) FILTER (WHERE racks <= ceil(members / (SELECT size FROM rack)::float8)) AS fewest,"
      + " (SELECT size FROM rack) AS rack_size FROM placed";

  /** What must hold for task groups after a run (GangBench), counts that must be zero like INVARIANTS. */
  static final Map<String, String> GANG_INVARIANTS = ordered(
      "group partly bound: some members pending, others not",
      "SELECT count(*) FROM (" + PARTIAL_GROUPS + ") x",
      "group whose status disagrees with its members (placed with a pending member, or pending with a bound one)",
      "SELECT count(*) FROM task_groups g WHERE EXISTS (SELECT 1 FROM tasks t WHERE t.group_id = g.id"
          + " AND t.group_attempt = g.restart_count AND (t.status = 'pending') <> (g.status = 'pending'))",
      "group whose current attempt has another member count than declared",
      "SELECT count(*) FROM task_groups g WHERE g.member_count <> (SELECT count(*) FROM tasks t"
          + " WHERE t.group_id = g.id AND t.group_attempt = g.restart_count)",
      "placed group whose members' nodes mix GPU vendors",
      "SELECT count(*) FROM (SELECT t.group_id FROM tasks t JOIN nodes n ON n.id = t.node_id WHERE t.group_id IS NOT"
          + " NULL AND t.status <> 'pending' GROUP BY 1 HAVING count(DISTINCT n.gpu_vendor) > 1) x",
      "bound member without its distributed environment (world, rank, master)",
      "SELECT count(*) FROM tasks WHERE group_id IS NOT NULL AND status <> 'pending' AND distributed IS NULL");

  static final Map<String, String> INVARIANTS = invariants();

  /** Name, statement, name, statement, …: in that order. */
  private static Map<String, String> ordered(String... pairs) {
    Map<String, String> checks = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      checks.put(pairs[i], pairs[i + 1]);
    }
    return Collections.unmodifiableMap(checks);
  }

  private static Map<String, String> invariants() {
    Map<String, String> checks = new LinkedHashMap<>();
    checks.put("burst task in a state other than pending or scheduled (no agents run)",
        "SELECT count(*) FROM tasks WHERE name = '" + TaskMix.NAME + "' AND status NOT IN ('pending', 'scheduled')");
    checks.put("task bound more than once per attempt (pending → scheduled events; a preempted task binds again)",
        "SELECT count(*) FROM (SELECT e.task_id FROM task_events e JOIN tasks t ON t.id = e.task_id"
            + " WHERE e.to_status = 'scheduled' GROUP BY e.task_id, t.preempt_count HAVING count(*) > 1 + t.preempt_count) x");
    checks.put("scheduled task without exactly one bind event per attempt",
        "SELECT count(*) FROM tasks t WHERE t.status = 'scheduled' AND (SELECT count(*) FROM task_events e"
            + " WHERE e.task_id = t.id AND e.to_status = 'scheduled') <> 1 + t.preempt_count");
    checks.put("card held by two whole-card tasks at overlapping times (allocation history)",
        "SELECT count(*) FROM allocations a JOIN allocations b ON a.node_id = b.node_id AND a.gpu_index = b.gpu_index"
            + " AND a.id < b.id WHERE a.kind = 'whole' AND b.kind = 'whole'"
            + " AND b.allocated_at < coalesce(a.released_at, 'infinity') AND a.allocated_at < coalesce(b.released_at,"
            + " 'infinity')");
    checks.put("pending task holding an allocation or a node",
        "SELECT count(*) FROM tasks t WHERE t.status = 'pending' AND (t.node_id IS NOT NULL OR EXISTS"
            + " (SELECT 1 FROM allocations a WHERE a.task_id = t.id AND a.active))");
    checks.put("whole-card task whose cards differ from its active allocations",
        "SELECT count(*) FROM tasks t WHERE t.status IN " + ACTIVE + " AND t.gpu_required > 0 AND ("
            + "cardinality(t.gpu_indices) <> t.gpu_required OR (SELECT count(*) FROM allocations a WHERE a.task_id = t.id"
            + " AND a.active AND a.kind = 'whole' AND a.node_id = t.node_id AND a.gpu_index = ANY(t.gpu_indices))"
            + " <> t.gpu_required OR EXISTS (SELECT 1 FROM allocations a WHERE a.task_id = t.id AND a.active"
            + " AND (a.kind <> 'whole' OR a.node_id <> t.node_id)))");
    checks.put("fractional task without exactly one active shard on its node",
        "SELECT count(*) FROM tasks t WHERE t.status IN " + ACTIVE + " AND t.gpu_required = 0 AND t.gpu_memory_mb > 0"
            + " AND (SELECT count(*) FROM allocations a WHERE a.task_id = t.id AND a.active AND a.kind = 'shard'"
            + " AND a.node_id = t.node_id AND a.memory_mb = t.gpu_memory_mb) <> 1");
    checks.put("card double-booked by whole-card tasks",
        "SELECT count(*) FROM (SELECT node_id, gpu_index FROM allocations WHERE active AND kind = 'whole'"
            + " GROUP BY 1, 2 HAVING count(*) > 1) x");
    checks.put("card held whole and sharded at once",
        "SELECT count(*) FROM allocations w JOIN allocations s ON s.node_id = w.node_id AND s.gpu_index = w.gpu_index"
            + " WHERE w.active AND s.active AND w.kind = 'whole' AND s.kind = 'shard'");
    checks.put("card whose shards exceed its capacity (total - max(500 MB, 10 %))",
        "SELECT count(*) FROM (SELECT a.node_id, a.gpu_index FROM allocations a JOIN cards c ON c.node_id = a.node_id"
            + " AND c.gpu_index = a.gpu_index WHERE a.active AND a.kind = 'shard' GROUP BY 1, 2, c.memory_total_mb"
            + " HAVING sum(a.memory_mb) > c.memory_total_mb - greatest(500, c.memory_total_mb * 10 / 100)) x");
    checks.put("allocation on a card its node does not report",
        "SELECT count(*) FROM allocations a LEFT JOIN cards c ON c.node_id = a.node_id AND c.gpu_index = a.gpu_index"
            + " WHERE a.active AND c.node_id IS NULL");
    checks.put("node whose gpu_used differs from its active tasks' cards, or exceeds gpu_total",
        "SELECT count(*) FROM nodes n WHERE n.gpu_used > n.gpu_total OR n.gpu_used <> (SELECT coalesce(sum("
            + "t.gpu_required), 0) FROM tasks t WHERE t.node_id = n.id AND t.status IN " + ACTIVE + ")");
    return Collections.unmodifiableMap(checks);
  }
}
