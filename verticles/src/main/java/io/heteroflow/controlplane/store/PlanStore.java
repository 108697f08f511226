package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.plan.Ending;
import io.heteroflow.controlplane.scheduler.plan.Estimate;
import io.heteroflow.controlplane.scheduler.plan.FairShare;
import io.heteroflow.protocol.message.Shard;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What queueing reads and writes beside the queues themselves (SPEC §13): each queue's use and head for fair
 * share, the expected ends of active tasks, and the estimated start of pending tasks and groups (written only
 * where it changed).
 */
public final class PlanStore {
  private final Pool pool;

  public PlanStore(Pool pool) {
    this.pool = pool;
  }

  public Future<List<Ending>> activeEndings() {
    return pool.query(Sql.ACTIVE_ENDINGS).execute().map(rows -> {
      List<Ending> endings = new ArrayList<>(rows.size());
      rows.forEach(row -> {
        Integer[] cards = row.getArrayOfIntegers("gpu_indices");
        Shard shard = Shard.fromJson((JsonObject) row.getValue("shard"));
        endings.add(new Ending(row.getString("node_id"), row.getOffsetDateTime("ends_at").toInstant(),
            cards == null ? List.of() : List.of(cards), shard == null ? null : shard.cardIndex(),
            row.getDouble("cpu_cores"), row.getLong("memory_mb")));
      });
      return endings;
    });
  }

  /** Each queue's own active use (GPU-equivalents, CPU cores, memory MB), for fair share between queues. */
  public Future<Map<String, FairShare.Amount>> queueShares() {
    return pool.query(Sql.QUEUE_SHARES).execute().map(rows -> {
      Map<String, FairShare.Amount> shares = new HashMap<>();
      rows.forEach(row -> shares.put(row.getString("queue"), new FairShare.Amount(row.getDouble("gpu_eq"),
          row.getDouble("cpu"), row.getDouble("memory"))));
      return shares;
    });
  }

  /** The first {@code perQueue} pending single tasks of every queue, in queue order. */
  public Future<List<TaskRecord>> queueHeads(int perQueue) {
    return pool.preparedQuery(Sql.QUEUE_HEADS).execute(Tuple.of(perQueue)).map(rows -> {
      List<TaskRecord> heads = new ArrayList<>(rows.size());
      rows.forEach(row -> heads.add(TaskRecord.from(row)));
      return heads;
    });
  }

  public Future<Void> setTaskEstimates(List<Estimate> estimates) {
    return write(Sql.SET_ESTIMATES, estimates);
  }

  public Future<Void> setGroupEstimates(List<Estimate> estimates) {
    return write(Sql.SET_GROUP_ESTIMATES, estimates);
  }

  private Future<Void> write(String statement, List<Estimate> estimates) {
    if (estimates.isEmpty()) {
      return Future.succeededFuture();
    }
    UUID[] ids = new UUID[estimates.size()];
    OffsetDateTime[] times = new OffsetDateTime[estimates.size()];
    String[] notes = new String[estimates.size()];
    for (int i = 0; i < ids.length; i++) {
      Estimate estimate = estimates.get(i);
      ids[i] = estimate.id();
      times[i] = estimate.at() == null ? null : estimate.at().atOffset(ZoneOffset.UTC);
      notes[i] = estimate.note();
    }
    return pool.preparedQuery(statement).execute(Tuple.of(ids, times, notes)).mapEmpty();
  }
}
