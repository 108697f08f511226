package io.heteroflow.bench;

import static io.heteroflow.bench.BenchFigures.round1;
import static io.heteroflow.bench.BenchFigures.round3;
import static io.heteroflow.bench.BenchFutures.await;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

/**
 * What PostgreSQL's statistics views say about this database: the server time of every statement
 * (pg_stat_statements, when the server preloads it) and the transactions committed and rolled back
 * (pg_stat_database).
 */
final class PgStatistics {
  private PgStatistics() {}

  /** pg_stat_statements, when the server preloads it: created in this database and reset; false otherwise. */
  static boolean resetStatements(Pool client) {
    try {
      await(client.query(BenchSql.CREATE_STATEMENT_STATISTICS).execute());
      await(client.query(BenchSql.RESET_STATEMENT_STATISTICS).execute());
      return true;
    } catch (Exception e) {
      return false; // not preloaded (e.g. an external server): the breakdown is left out
    }
  }

  /** The statements of this database by total server execution time during the drain (pg_stat_statements). */
  static JsonArray topStatements(Pool client) throws Exception {
    JsonArray top = new JsonArray();
    await(client.query(BenchSql.TOP_STATEMENTS).execute())
        .forEach(row -> {
          String query = row.getString("query");
          top.add(new JsonObject().put("query", query.length() > 160 ? query.substring(0, 157) + "..." : query)
              .put("calls", row.getLong("calls")).put("total_ms", round1(row.getDouble("total_exec_time")))
              .put("mean_ms", round3(row.getDouble("mean_exec_time"))).put("rows", row.getLong("rows")));
        });
    return top;
  }

  /** Transactions committed and rolled back in this database (pg_stat_database; its counters lag ~0.5 s). */
  record Transactions(long commits, long rollbacks) {
    static Transactions read(Pool client) throws Exception {
      await(client.query(BenchSql.CLEAR_STATISTICS_SNAPSHOT).execute());
      Row row = await(client.query(BenchSql.TRANSACTIONS).execute()).iterator().next();
      return new Transactions(row.getLong("xact_commit"), row.getLong("xact_rollback"));
    }
  }
}
