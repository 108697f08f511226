package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.message.Beat;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Writes liveness-only beats in batches that form by themselves (as {@link HeartbeatWriter}): one statement renews
 * the leases of a whole batch (V19 node_leases), and one more counts the running tasks the agents did not report.
 * A beat not applied (another boot holds the node, the node is offline or unknown, the beat is not newer) answers
 * {@code applied: false}, which asks its agent for a full heartbeat; the holder refusal itself is the heartbeat's.
 */
final class LeaseWriter {
  private static final int MAX_BATCH = 1000;
  private final Pool pool;
  private final AgentMisses misses;
  private final String via;
  private final SelfFormingBatches<Beat, NodeStore.HeartbeatOutcome> batches =
      new SelfFormingBatches<>(Beat::nodeId, MAX_BATCH, this::writeAll);

  LeaseWriter(Pool pool, AgentMisses misses, String via) {
    this.pool = pool;
    this.misses = misses;
    this.via = via;
  }

  Future<NodeStore.HeartbeatOutcome> submit(Beat beat) {
    return batches.submit(beat);
  }

  private Future<List<Future<NodeStore.HeartbeatOutcome>>> writeAll(List<Beat> beats) {
    Tuple leases = Tuple.tuple()
        .addArrayOfString(beats.stream().map(Beat::nodeId).toArray(String[]::new))
        .addArrayOfString(beats.stream().map(Beat::bootId).toArray(String[]::new))
        .addArrayOfLong(beats.stream().map(Beat::seq).toArray(Long[]::new))
        .addArrayOfString(Collections.nCopies(beats.size(), via).toArray(String[]::new));
    return pool.withTransaction(conn -> conn.query(Sql.ASYNC_COMMIT).execute()
            .compose(v -> conn.preparedQuery(Sql.RENEW_NODE_LEASES).execute(leases)))
        .compose(rows -> {
          Set<String> renewed = new HashSet<>();
          rows.forEach(row -> renewed.add(row.getString(0)));
          List<AgentMisses.Reported> reports = beats.stream().filter(beat -> renewed.contains(beat.nodeId()))
              .map(beat -> new AgentMisses.Reported(beat.nodeId(), beat.activeTasks())).toList();
          return misses.count(reports).map(lost -> {
            List<Future<NodeStore.HeartbeatOutcome>> outcomes = new ArrayList<>();
            for (Beat beat : beats) {
              outcomes.add(Future.succeededFuture(new NodeStore.HeartbeatOutcome(renewed.contains(beat.nodeId()),
                  lost.getOrDefault(beat.nodeId(), List.of()))));
            }
            return outcomes;
          });
        });
  }
}
