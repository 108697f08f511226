package io.heteroflow.bench;

import io.heteroflow.controlplane.store.Database;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The database's own limit for what a bind must do at least: the two-row bind transaction (task CAS
 * {@code UPDATE tasks … WHERE id = $1 AND status = 'pending'} and node capacity
 * {@code UPDATE nodes SET gpu_used = gpu_used + 1 WHERE id = $1 AND gpu_used + 1 <= gpu_total}, one transaction:
 * BEGIN, the two statements, COMMIT), with vertx-pg-client (the driver the scheduler uses, same pipelining and
 * prepared-statement cache), one connection per client, on the real migrated schema (all of the tasks table's
 * indexes) of a scratch database holding as many nodes as the scenario. The scratch nodes have a huge
 * {@code gpu_total} so every transaction succeeds; the capacity predicate is still evaluated. The session stays
 * open so the phase probe can run single transactions interleaved with real binds (same disk, same moment).
 */
final class RawPgBench implements AutoCloseable {
  static final String CLIENT = "vertx-pg-client";
  /**
   * Transactions per second with 1 and with 16 concurrent clients, and with 16 clients when each transaction
   * first share-locks the one leader row as the bind's fence check does ({@link BenchSql#RAW_BIND_FENCE}).
   */
  record Rates(double oneClient, double sixteenClients, double sixteenClientsWithFence, double jvmCpuMsPerTx16,
               double pgCpuMsPerTx16) {
  }

  private final Vertx vertx;
  private final Pool setup;
  private final Pool pool;
  private final List<String> nodeIds;
  private final long postmaster;
  private final AtomicLong nodeCursor = new AtomicLong();
  private double lastJvmCpu;
  private double lastPgCpu;
  private ConcurrentLinkedQueue<UUID> pending = new ConcurrentLinkedQueue<>();

  private RawPgBench(Vertx vertx, Pool setup, Pool pool, List<String> nodeIds, long postmaster) {
    this.vertx = vertx;
    this.setup = setup;
    this.pool = pool;
    this.nodeIds = nodeIds;
    this.postmaster = postmaster;
  }

  /** The server's postmaster PID when it runs on this machine, else -1. */
  long postmaster() {
    return postmaster;
  }

  /** Migrates {@code scratch} (an empty database) and fills it with {@code nodes} nodes. */
  static RawPgBench open(Database scratch, int nodes) throws Exception {
    scratch.migrateBlocking();
    Vertx vertx = Vertx.vertx();
    Pool setup = open(vertx, scratch, 2);
    await(setup.preparedQuery(BenchSql.RAW_INSERT_NODES).execute(Tuple.of(nodes)));
    List<String> nodeIds = new ArrayList<>();
    await(setup.query(BenchSql.NODE_IDS).execute()).forEach(row -> nodeIds.add(row.getString("id")));
    long postmaster = ProcessStats.postmasterOf(await(setup.query(BenchSql.BACKEND_PID).execute())
        .iterator().next().getInteger("pid"));
    return new RawPgBench(vertx, setup, open(vertx, scratch, 16), nodeIds, postmaster);
  }

  /** Runs of {@code seconds}: 1 client, 16 clients, 16 clients with the fence (each after a 0.3 s warm-up). */
  Rates measure(double seconds) throws Exception {
    // pending tasks for each run, sized from what was seen here (≤ 3.2k tx/s with 1 client), with margin
    addPending((long) ((seconds + 0.3) * 8000) + 1000);
    run(1, 0.3, false); // warm-up: connections, prepared statements
    double one = run(1, seconds, false);
    addPending((long) ((seconds + 0.3) * Math.max(8 * one, 16_000)) + 1000);
    run(16, 0.3, false);
    double sixteen = run(16, seconds, false);
    double jvmCpu = lastJvmCpu;
    double pgCpu = lastPgCpu;
    addPending((long) ((seconds + 0.3) * Math.max(1.5 * sixteen, 16_000)) + 1000);
    run(16, 0.3, true);
    double fenced = run(16, seconds, true);
    return new Rates(one, sixteen, fenced, jvmCpu, pgCpu);
  }

  /** Makes sure {@code count} pending tasks are there for {@link #oneTransaction}. */
  void prepareSingles(int count) throws Exception {
    if (pending.size() < count) {
      addPending(count - pending.size());
    }
  }

  /** One two-row bind transaction on a connection of the pool; true when it committed. */
  Future<Boolean> oneTransaction() {
    UUID task = pending.poll();
    if (task == null) {
      return Future.failedFuture(new IllegalStateException("no pending raw task left"));
    }
    String node = nodeIds.get((int) (nodeCursor.getAndIncrement() % nodeIds.size()));
    return pool.withTransaction(conn -> transaction(conn, task, node)).map(true);
  }

  /** Inserts {@code count} pending tasks, vacuums, and queues the ids of all pending tasks. */
  private void addPending(long count) throws Exception {
    await(setup.preparedQuery(BenchSql.RAW_INSERT_PENDING).execute(Tuple.of(count)));
    await(setup.query(BenchSql.vacuumAnalyze("tasks")).execute());
    await(setup.query(BenchSql.vacuumAnalyze("nodes")).execute());
    ConcurrentLinkedQueue<UUID> ids = new ConcurrentLinkedQueue<>();
    await(setup.query(BenchSql.PENDING_TASK_IDS).execute())
        .forEach(row -> ids.add(row.getUUID("id")));
    pending = ids;
  }

  /** {@code clients} loops of bind transactions until {@code seconds} pass; committed per second. */
  private double run(int clients, double seconds, boolean fence) throws Exception {
    List<SqlConnection> connections = new ArrayList<>();
    for (int i = 0; i < clients; i++) {
      connections.add(await(pool.getConnection()));
    }
    AtomicLong committed = new AtomicLong();
    double jvmBefore = ProcessStats.jvmCpuSeconds();
    double pgBefore = ProcessStats.postgresCpuSeconds(postmaster);
    long start = System.nanoTime();
    long deadline = start + (long) (seconds * 1e9);
    List<Future<Void>> loops = new ArrayList<>();
    try {
      for (SqlConnection connection : connections) {
        Promise<Void> done = Promise.promise();
        loop(connection, committed, deadline, fence, done);
        loops.add(done.future());
      }
      await(Future.all(loops));
    } finally {
      for (SqlConnection connection : connections) {
        await(connection.close());
      }
    }
    long elapsed = System.nanoTime() - start;
    lastJvmCpu = 1000 * (ProcessStats.jvmCpuSeconds() - jvmBefore) / Math.max(1, committed.get());
    lastPgCpu = 1000 * (ProcessStats.postgresCpuSeconds(postmaster) - pgBefore) / Math.max(1, committed.get());
    return committed.get() * 1e9 / elapsed;
  }

  private void loop(SqlConnection conn, AtomicLong committed, long deadline, boolean fence, Promise<Void> done) {
    UUID task = pending.poll();
    if (task == null || System.nanoTime() >= deadline) {
      done.tryComplete();
      return;
    }
    String node = nodeIds.get((int) (nodeCursor.getAndIncrement() % nodeIds.size()));
    conn.begin()
        .compose(tx -> (fence ? conn.preparedQuery(BenchSql.RAW_BIND_FENCE).execute().mapEmpty() : Future.succeededFuture())
            .compose(v -> transaction(conn, task, node)).compose(v -> tx.commit()))
        .onSuccess(v -> {
          committed.incrementAndGet();
          loop(conn, committed, deadline, fence, done);
        })
        .onFailure(done::tryFail);
  }

  private static Future<Void> transaction(SqlConnection conn, UUID task, String node) {
    return conn.preparedQuery(BenchSql.RAW_BIND_TASK).execute(Tuple.of(task, node))
        .compose(claimed -> {
          if (claimed.rowCount() != 1) {
            throw new IllegalStateException("raw bind: task " + task + " was not pending");
          }
          return conn.preparedQuery(BenchSql.RAW_BIND_NODE).execute(Tuple.of(node));
        })
        .map(accounted -> {
          if (accounted.rowCount() != 1) {
            throw new IllegalStateException("raw bind: node " + node + " refused the card");
          }
          return null;
        });
  }

  private static Pool open(Vertx vertx, Database database, int size) {
    PgConnectOptions connect = new PgConnectOptions(database.options()).setPipeliningLimit(16)
        .setCachePreparedStatements(true);
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(size)).connectingTo(connect).using(vertx).build();
  }

  @Override
  public void close() throws Exception {
    try {
      await(pool.close());
      await(setup.close());
    } finally {
      await(vertx.close());
    }
  }

  /** Waits without BenchFutures' 120 s limit: one measured run lasts --pg-seconds, which may be up to 600 s. */
  private static <T> T await(Future<T> future) {
    return future.await();
  }
}
