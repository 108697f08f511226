package io.heteroflow.controlplane.store;

import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Persisted plugin switches and weights; defaults are seeded once and never overwrite an operator's choice. */
public final class PluginConfigStore {
  private final Pool pool;

  public PluginConfigStore(Pool pool) {
    this.pool = pool;
  }

  public Future<Void> seedDefaults(PluginRegistry registry) {
    List<Tuple> batch = registry.registrations().stream()
        .filter(registration -> !registration.locked())
        .map(registration -> toTuple(registration.defaults()))
        .toList();
    return batch.isEmpty() ? Future.succeededFuture()
        : pool.preparedQuery(Sql.SEED_PLUGIN_CONFIG).executeBatch(batch).mapEmpty();
  }

  public Future<Map<String, PluginConfig>> load() {
    return pool.query(Sql.PLUGIN_CONFIGS).execute().map(rows -> {
      Map<String, PluginConfig> configs = new HashMap<>();
      rows.forEach(row -> configs.put(row.getString("name"), new PluginConfig(row.getString("name"),
          row.getBoolean("enabled"), row.getInteger("weight"), ((JsonObject) row.getValue("extra")).getMap())));
      return configs;
    });
  }

  /** Saves several plugins' configuration in one transaction (e.g. binpack on and spread off together). */
  public Future<Void> save(List<PluginConfig> configs) {
    return pool.withTransaction(conn -> conn.preparedQuery(Sql.UPSERT_PLUGIN_CONFIG)
        .executeBatch(configs.stream().map(PluginConfigStore::toTuple).toList())).mapEmpty();
  }

  private static Tuple toTuple(PluginConfig config) {
    return Tuple.of(config.name(), config.enabled(), config.weight(), new JsonObject(config.extra()));
  }
}
