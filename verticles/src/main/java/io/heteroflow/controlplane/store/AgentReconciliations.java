package io.heteroflow.controlplane.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What each heartbeat's answer needs from PostgreSQL, read for many heartbeats at once: the node's tasks to run or
 * stop ({@link Sql#TASKS_FOR_AGENTS}) and, of the tasks the agent says it runs, those not active on its node
 * ({@link Sql#NOT_ACTIVE_ON_NODES}). Two statements per batch instead of two per heartbeat: at 5,000 agents every
 * 2 s, 5,000 queries a second had queued for the pool's connections. Batches form by themselves
 * ({@link SelfFormingBatches}); each heartbeat gets its own node's part.
 */
final class AgentReconciliations {
  /** At most this many heartbeats' reads per pair of statements. */
  private static final int MAX_BATCH = 1000;

  /** One heartbeat's question: its node and the task ids its agent reports running. */
  record Question(String nodeId, List<UUID> reported) {}

  private final Pool pool;
  private final SelfFormingBatches<Question, TaskStore.AgentView> batches =
      new SelfFormingBatches<>(null, MAX_BATCH, this::readAll);

  AgentReconciliations(Pool pool) {
    this.pool = pool;
  }

  /** A reported id that is no UUID fails this heartbeat's read alone (before it joins a batch). */
  Future<TaskStore.AgentView> read(String nodeId, List<String> reported) {
    List<UUID> ids;
    try {
      ids = reported == null ? List.of() : reported.stream().map(UUID::fromString).toList();
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("active_tasks: " + e.getMessage(), e));
    }
    return batches.submit(new Question(nodeId, ids));
  }

  private Future<List<Future<TaskStore.AgentView>>> readAll(List<Question> questions) {
    String[] nodes = questions.stream().map(Question::nodeId).distinct().toArray(String[]::new);
    List<UUID> reportedIds = new ArrayList<>();
    List<String> reportedNodes = new ArrayList<>();
    for (Question question : questions) {
      for (UUID id : question.reported()) {
        reportedIds.add(id);
        reportedNodes.add(question.nodeId());
      }
    }
    Future<Map<String, List<TaskRecord>>> assigned = pool.preparedQuery(Sql.TASKS_FOR_AGENTS)
        .execute(Tuple.tuple().addArrayOfString(nodes)).map(rows -> {
          Map<String, List<TaskRecord>> byNode = new HashMap<>();
          for (Row row : rows) {
            TaskRecord task = TaskRecord.from(row);
            byNode.computeIfAbsent(task.nodeId(), k -> new ArrayList<>()).add(task);
          }
          return byNode;
        });
    Future<Map<String, List<UUID>>> orphans = reportedIds.isEmpty() ? Future.succeededFuture(Map.of())
        : pool.preparedQuery(Sql.NOT_ACTIVE_ON_NODES).execute(Tuple.tuple()
            .addArrayOfUUID(reportedIds.toArray(UUID[]::new)).addArrayOfString(reportedNodes.toArray(String[]::new)))
            .map(rows -> {
              Map<String, List<UUID>> byNode = new HashMap<>();
              rows.forEach(row -> byNode.computeIfAbsent(row.getString("node"), k -> new ArrayList<>())
                  .add(row.getUUID("id")));
              return byNode;
            });
    return Future.all(assigned, orphans).map(read -> questions.stream().map(question -> Future.succeededFuture(
        new TaskStore.AgentView(assigned.result().getOrDefault(question.nodeId(), List.of()),
            orphans.result().getOrDefault(question.nodeId(), List.of())))).toList());
  }
}
