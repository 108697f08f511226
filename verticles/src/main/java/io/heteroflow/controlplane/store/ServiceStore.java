package io.heteroflow.controlplane.store;

import io.heteroflow.protocol.TaskStatus;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Inference services in PostgreSQL (SPEC §9): the service row (kind {@code service}) holds the desired replica
 * count and who owns it; each replica is a single task in a slot. Every write is a CAS: a slot advances a
 * generation only from the one read ({@code replica_slots}), the count moves only from the version read, and a
 * slot never has two live replicas (a partial unique index), so two leaders or a late beat never duplicate one.
 */
public final class ServiceStore {
  private final Pool pool;

  public ServiceStore(Pool pool) {
    this.pool = pool;
  }

  /** A running service and whether its tenant is active. */
  public record Service(GroupRecord group, boolean tenantActive) {
  }

  /**
   * Creates the service and the replicas of its first slots in one transaction. {@code windowClosed}: created
   * outside its schedule window, it waits for it with 0 replicas (the window owns the count and restores
   * {@code replicas} when it opens), or with {@code scale_to} for a window that scales.
   */
  public Future<GroupRecord> create(String tenant, ServiceSpec spec, boolean windowClosed) {
    UUID id = UUID.randomUUID();
    int desired = !windowClosed ? spec.replicas() : spec.windows().scaleTo() != null ? spec.windows().scaleTo() : 0;
    Tuple params = Tuple.tuple().addUUID(id).addString(tenant).addString(spec.name()).addString(spec.gpuType())
        .addInteger(spec.template().priority()).addInteger(spec.replicas()).addString(spec.queue())
        .addValue(spec.replicaSpecJson()).addValue(spec.autoscale() == null ? null : spec.autoscale().toJson())
        .addValue(spec.windows() == null ? null : spec.windows().toJson()).addInteger(desired)
        .addBoolean(windowClosed).addInteger(windowClosed ? spec.replicas() : null);
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.INSERT_SERVICE).execute(params).compose(rows -> {
      GroupRecord service = GroupRecord.from(rows.iterator().next());
      Future<Void> started = event(conn, id, "created", "service created with " + spec.replicas() + " replica(s)"
          + (windowClosed ? ", outside its schedule window: " + desired + " until it opens" : ""), null);
      for (int slot = 0; slot < desired; slot++) {
        int each = slot;
        started = started.compose(v -> startIn(conn, id, each, 0, 0, false)).mapEmpty();
      }
      return started.map(service);
    }));
  }

  public Future<List<Service>> running(int limit) {
    return pool.preparedQuery(Sql.RUNNING_SERVICES).execute(Tuple.of(limit)).map(rows -> {
      List<Service> services = new ArrayList<>();
      rows.forEach(row -> services.add(service(row)));
      return services;
    });
  }

  /** The service of that id (running or stopped), with whether its tenant is active. */
  public Future<Optional<Service>> get(UUID id) {
    return pool.preparedQuery(Sql.SERVICE_BY_ID).execute(Tuple.of(id)).map(rows -> rows.size() == 0
        ? Optional.<Service>empty() : Optional.of(service(rows.iterator().next())));
  }

  private static Service service(Row row) {
    return new Service(GroupRecord.from(row), row.getBoolean("tenant_active"));
  }

  /** Every slot of each service, in slot order. */
  public Future<Map<UUID, List<ReplicaSlot>>> slots(List<UUID> services) {
    return pool.preparedQuery(Sql.SERVICE_SLOTS).execute(Tuple.of(services.toArray(new UUID[0]))).map(rows -> {
      Map<UUID, List<ReplicaSlot>> slots = new LinkedHashMap<>();
      rows.forEach(row -> slots.computeIfAbsent(row.getUUID("service_id"), k -> new ArrayList<>())
          .add(ReplicaSlot.from(row)));
      return slots;
    });
  }

  /**
   * Creates the replica of {@code slot} at {@code generation} (0: a slot never used) with {@code failures} quick
   * failures behind it; {@code rebuild} counts it as a rebuild. Empty when another rebuilder advanced the slot
   * first, the slot is no longer wanted, or the service stopped: nothing is written then.
   */
  public Future<Optional<UUID>> startReplica(UUID service, int slot, int generation, int failures, boolean rebuild) {
    return pool.withTransaction(conn -> startIn(conn, service, slot, generation, failures, rebuild)
        .compose(created -> created.isPresent() ? Future.succeededFuture(created)
            : Future.failedFuture(new NotStarted())))
        .recover(failure -> failure instanceof NotStarted || isUniqueViolation(failure)
            ? Future.succeededFuture(Optional.empty()) : Future.failedFuture(failure));
  }

  /** Rolls a transaction back without an error to report. */
  private static final class NotStarted extends RuntimeException {
    NotStarted() {
      super(null, null, false, false);
    }
  }

  private static boolean isUniqueViolation(Throwable failure) {
    return failure instanceof io.vertx.pgclient.PgException pg && "23505".equals(pg.getSqlState());
  }

  private static Future<Optional<UUID>> startIn(SqlConnection conn, UUID service, int slot, int generation,
                                                int failures, boolean rebuild) {
    return conn.preparedQuery(Sql.ADVANCE_SLOT).execute(Tuple.of(service, slot, generation, failures))
        .compose(advanced -> {
          if (advanced.size() == 0) {
            return Future.succeededFuture(Optional.<UUID>empty());
          }
          UUID id = UUID.randomUUID();
          return conn.preparedQuery(Sql.INSERT_REPLICA).execute(Tuple.of(id, service, slot, generation))
              .compose(inserted -> {
                if (inserted.size() == 0) {
                  return Future.succeededFuture(Optional.<UUID>empty());
                }
                String how = generation == 0 ? "created" : "re-created (generation " + generation + ")";
                Future<?> counted = rebuild ? conn.preparedQuery(Sql.COUNT_REBUILD).execute(Tuple.of(service))
                    : Future.succeededFuture();
                return counted.compose(v -> conn.preparedQuery(Sql.INSERT_CREATED_EVENTS).execute(Tuple.tuple()
                        .addArrayOfUUID(new UUID[] {id}).addString(how + " as replica " + slot + " of service "
                            + service)))
                    .map(Optional.of(id));
              });
        });
  }

  /**
   * Sets the desired count and its owner by CAS on the version read, with a group event of {@code kind}; empty
   * when the service changed meanwhile or stopped.
   */
  public Future<Optional<GroupRecord>> setReplicas(GroupRecord service, int desired, boolean windowOwns,
                                                   Integer beforeWindow, String kind, String message,
                                                   JsonObject details) {
    Tuple params = Tuple.tuple().addUUID(service.id()).addLong(service.version()).addInteger(desired)
        .addBoolean(windowOwns).addInteger(beforeWindow);
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.CAS_SERVICE_REPLICAS).execute(params)
        .compose(rows -> rows.size() == 0 ? Future.succeededFuture(Optional.<GroupRecord>empty())
            : event(conn, service.id(), kind, message, details)
                .map(Optional.of(GroupRecord.from(rows.iterator().next())))));
  }

  /** A live replica of a stopping service: what its stop must end. */
  public record LiveReplica(UUID id, TaskStatus status, String nodeId) {
  }

  /**
   * Stops the service for good by CAS (no replica is created for it any more) and answers its live replicas, for
   * the caller to stop; empty when it changed meanwhile.
   */
  public Future<Optional<List<LiveReplica>>> stop(GroupRecord service, String code, String message) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.CAS_SERVICE_STOPPED)
        .execute(Tuple.of(service.id(), service.version(), code, message)).compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(Optional.<List<LiveReplica>>empty());
          }
          return event(conn, service.id(), "stopped", message, null)
              .compose(v -> conn.preparedQuery(Sql.LIVE_REPLICAS).execute(Tuple.of(service.id())))
              .map(live -> {
                List<LiveReplica> replicas = new ArrayList<>();
                live.forEach(row -> replicas.add(new LiveReplica(row.getUUID("id"),
                    TaskStatus.fromWire(row.getString("status")), row.getString("node_id"))));
                return Optional.of(replicas);
              });
        }));
  }

  public Future<Void> event(UUID group, String kind, String message, JsonObject details) {
    return pool.withConnection(conn -> event(conn, group, kind, message, details));
  }

  private static Future<Void> event(SqlConnection conn, UUID group, String kind, String message, JsonObject details) {
    return conn.preparedQuery(Sql.INSERT_GROUP_EVENT).execute(Tuple.of(group, kind, message, details)).mapEmpty();
  }

  /** The group's events, newest first. */
  public Future<JsonArray> events(UUID group, int limit) {
    return pool.preparedQuery(Sql.GROUP_EVENTS).execute(Tuple.of(group, limit)).map(rows -> {
      JsonArray events = new JsonArray();
      for (Row row : rows) {
        events.add(new JsonObject().put("at", row.getOffsetDateTime("at").toInstant().toString())
            .put("kind", row.getString("kind")).put("message", row.getString("message"))
            .put("details", row.getValue("details")));
      }
      return events;
    });
  }

  /** Samples the utilisation of each service's cards now (and forgets samples older than 10 minutes). */
  public Future<Void> sampleUtilization(List<UUID> services) {
    return pool.preparedQuery(Sql.SAMPLE_SERVICE_UTILIZATION).execute(Tuple.of(services.toArray(new UUID[0])))
        .compose(v -> pool.query(Sql.PRUNE_UTILIZATION).execute()).mapEmpty();
  }

  /** The mean utilisation of a service's cards over a window and how many samples it rests on. */
  public record Utilization(double meanPercent, int samples) {
  }

  /** Per service, its utilisation over the last {@code seconds} since its count last changed. */
  public Future<Map<UUID, Utilization>> utilization(List<UUID> services, int seconds) {
    return pool.preparedQuery(Sql.UTILIZATION_WINDOW).execute(Tuple.of(services.toArray(new UUID[0]), seconds))
        .map(rows -> {
          Map<UUID, Utilization> found = new LinkedHashMap<>();
          for (Row row : rows) {
            Double mean = row.getDouble("mean");
            if (mean != null) {
              found.put(row.getUUID("service_id"), new Utilization(mean, row.getInteger("samples")));
            }
          }
          return found;
        });
  }

  /** A running service's desired and running replicas (services of one tenant and name summed). */
  public record ReplicaCount(String tenant, String name, long desired, long running) {
  }

  /** Every running service's replica counts, in one read (the metrics gauge). */
  public Future<List<ReplicaCount>> replicaCounts() {
    return pool.query(Sql.SERVICE_REPLICA_COUNTS).execute().map(rows -> {
      List<ReplicaCount> counts = new ArrayList<>();
      rows.forEach(row -> counts.add(new ReplicaCount(row.getString("tenant"), row.getString("name"),
          row.getLong("desired"), row.getLong("running"))));
      return counts;
    });
  }
}
