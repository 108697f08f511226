package io.heteroflow.controlplane.store;

import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;
import java.util.List;

/**
 * One queue (SPEC §13): its place in the tree, its weight among siblings, its guaranteed and maximum quota in
 * GPU-equivalents ({@code maxGpuEq} null: no maximum), its caps, and the tenants that may submit to it.
 */
public record QueueRecord(String name, String parent, int weight, double guaranteed, Double maxGpuEq,
                          Integer maxCardsPerTask, Integer maxRunning, List<String> tenants, OffsetDateTime createdAt,
                          long version) {
  /** The queue every other descends from; a tenant no queue lists submits here. */
  public static final String ROOT = "root";

  public QueueRecord {
    tenants = List.copyOf(tenants);
  }

  static QueueRecord from(Row row) {
    String[] tenants = row.getArrayOfStrings("tenants");
    return new QueueRecord(row.getString("name"), row.getString("parent"), row.getInteger("weight"),
        row.getDouble("guaranteed"), row.getDouble("max_gpu_eq"), row.getInteger("max_cards_per_task"),
        row.getInteger("max_running"), tenants == null ? List.of() : List.of(tenants),
        row.getOffsetDateTime("created_at"), row.getLong("version"));
  }

  /** Whether the scheduler has anything to enforce for this queue. */
  public boolean limits() {
    return maxGpuEq != null || maxRunning != null;
  }
}
