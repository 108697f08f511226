package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Optional;

/**
 * The leader term in PostgreSQL (ARCHITECTURE.md, "The one principle"): elected and renewed with database time
 * and a lease, so a paused or partitioned leader's term simply expires; every leader-only write checks the
 * fence in its own transaction. Also the register of live control-plane members.
 */
public final class LeaderStore {
  private final Pool pool;

  public LeaderStore(Pool pool) {
    this.pool = pool;
  }

  /** The new term when the lease was free (or expired), else empty. */
  public Future<Optional<Long>> elect(String member, int leaseSeconds) {
    return pool.preparedQuery(Sql.ELECT_LEADER).execute(Tuple.of(member, (double) leaseSeconds)).map(LeaderStore::term);
  }

  /** Extends the lease of a term that is still current; empty when it is not (someone else leads now). */
  public Future<Optional<Long>> renew(String member, long term, int leaseSeconds) {
    return pool.preparedQuery(Sql.RENEW_LEADER).execute(Tuple.of(member, term, (double) leaseSeconds))
        .map(LeaderStore::term);
  }

  public Future<Void> resign(String member, long term) {
    return pool.preparedQuery(Sql.RESIGN_LEADER).execute(Tuple.of(member, term)).mapEmpty();
  }

  /** Inside a transaction: fails with {@link NotLeaderException} unless {@code term} of {@code member} is current. */
  static Future<Void> checkFence(SqlConnection conn, Fence fence) {
    if (fence == null) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(Sql.CHECK_FENCE).execute(Tuple.of(fence.member(), fence.term())).map(rows -> {
      if (rows.size() == 0) {
        throw new NotLeaderException(fence);
      }
      return null;
    });
  }

  public Future<Void> seen(String member, String host, int httpPort) {
    return pool.preparedQuery(Sql.SEEN_CONTROL_PLANE).execute(Tuple.of(member, host, httpPort)).mapEmpty();
  }

  /** Whether some member holds an unexpired term (read on PostgreSQL's clock; for /health/ready). */
  public Future<Boolean> leaderKnown() {
    return pool.query(Sql.LEADER).execute().map(rows -> {
      Row row = rows.iterator().next();
      return Boolean.TRUE.equals(row.getBoolean("valid")) && row.getString("holder") != null;
    });
  }

  /** The leader row and the control planes seen in the last {@code withinSeconds}. */
  public Future<JsonObject> describe(int withinSeconds) {
    Future<io.vertx.sqlclient.RowSet<Row>> leader = pool.query(Sql.LEADER).execute();
    Future<io.vertx.sqlclient.RowSet<Row>> members = pool.preparedQuery(Sql.LIVE_CONTROL_PLANES)
        .execute(Tuple.of((double) withinSeconds));
    return Future.all(leader, members).map(both -> {
      Row row = leader.result().iterator().next();
      boolean valid = Boolean.TRUE.equals(row.getBoolean("valid"));
      String holder = valid ? row.getString("holder") : null;
      JsonArray list = new JsonArray();
      for (Row member : members.result()) {
        list.add(new JsonObject().put("member_id", member.getString("member_id")).put("host", member.getString("host"))
            .put("http_port", member.getInteger("http_port"))
            .put("started_at", member.getOffsetDateTime("started_at").toString())
            .put("last_seen", member.getOffsetDateTime("last_seen").toString())
            .put("leader", member.getString("member_id").equals(holder)));
      }
      return new JsonObject()
          .put("leader", new JsonObject().put("member_id", holder).put("term", row.getLong("term"))
              .put("lease_until", row.getOffsetDateTime("lease_until") == null ? null
                  : row.getOffsetDateTime("lease_until").toString()))
          .put("members", list);
    });
  }

  private static Optional<Long> term(io.vertx.sqlclient.RowSet<Row> rows) {
    return rows.size() == 0 ? Optional.empty() : Optional.of(rows.iterator().next().getLong("term"));
  }

  /** Who writes as leader, and under which term. */
  public record Fence(String member, long term) {
  }

  /** A leader-only write by a member whose term is no longer current: refused, nothing written. */
  public static final class NotLeaderException extends RuntimeException {
    public NotLeaderException(Fence fence) {
      super("member " + fence.member() + " no longer leads with term " + fence.term(), null, false, false);
    }
  }
}
