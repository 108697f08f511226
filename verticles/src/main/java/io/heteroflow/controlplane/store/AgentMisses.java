package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Counts, after applied heartbeats and beats, the running tasks each agent did not report ({@link Sql#COUNT_AGENT_MISSES}):
 * a task missed {@link #MISSES_LOST} times in a row is lost (in a restart) or forgotten by its agent.
 */
final class AgentMisses {
  private static final Logger LOG = Logger.getLogger(AgentMisses.class.getName());
  /** A running task its agent has not reported in this many heartbeats or beats in a row is lost. */
  static final int MISSES_LOST = 2;
  private final Pool pool;

  AgentMisses(Pool pool) {
    this.pool = pool;
  }

  /** What one agent said it runs, in an applied heartbeat or beat. */
  record Reported(String nodeId, List<String> activeTasks) {
  }

  /**
   * The running tasks their agents no longer run, per node. A failed count loses nothing: it answers none and the
   * next heartbeat counts again.
   */
  Future<Map<String, List<NodeStore.LostTask>>> count(List<Reported> reports) {
    if (reports.isEmpty()) {
      return Future.succeededFuture(Map.of());
    }
    Tuple params = Tuple.tuple().addArrayOfString(reports.stream().map(Reported::nodeId).toArray(String[]::new))
        .addArrayOfString(reports.stream().map(report -> new JsonArray(report.activeTasks()).encode())
            .toArray(String[]::new));
    return pool.preparedQuery(Sql.COUNT_AGENT_MISSES).execute(params).<Map<String, List<NodeStore.LostTask>>>map(rows -> {
      Map<String, List<NodeStore.LostTask>> lost = new HashMap<>();
      rows.forEach(row -> {
        if (row.getInteger("agent_misses") >= MISSES_LOST) {
          lost.computeIfAbsent(row.getString("node_id"), k -> new ArrayList<>())
              .add(new NodeStore.LostTask(row.getUUID("id"), Boolean.TRUE.equals(row.getBoolean("restarted"))));
        }
      });
      return lost;
    }).recover(e -> {
      LOG.log(Level.FINE, "counting the tasks agents did not report failed", e);
      return Future.succeededFuture(Map.of());
    });
  }
}
