package io.heteroflow.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.Map;

/**
 * What must hold after a run, checked in PostgreSQL over every task (burst and probes): each a count of
 * offending rows that must be zero (the statements are BenchSql.INVARIANTS). Answers the violated ones as {check, rows}.
 */
final class Invariants {
  private Invariants() {}

  static JsonArray check(Pool client) throws Exception {
    return check(client, BenchSql.INVARIANTS);
  }

  /** The violated ones of {@code checks} (name → a count of offending rows that must be zero). */
  static JsonArray check(Pool client, Map<String, String> checks) throws Exception {
    JsonArray violations = new JsonArray();
    for (Map.Entry<String, String> check : checks.entrySet()) {
      long rows = BenchFutures.await(client.query(check.getValue()).execute()).iterator().next().getLong(0);
      if (rows != 0) {
        violations.add(new JsonObject().put("check", check.getKey()).put("rows", rows));
      }
    }
    return violations;
  }
}
