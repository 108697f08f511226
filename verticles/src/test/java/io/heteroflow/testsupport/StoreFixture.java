package io.heteroflow.testsupport;

import io.heteroflow.protocol.message.Heartbeat;

import static io.heteroflow.testsupport.ControlPlaneHarness.await;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.store.BatchBindStore;
import io.heteroflow.controlplane.store.BindStore;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.NodeStore;
import io.heteroflow.controlplane.store.TaskRecord;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.controlplane.store.TaskStore;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The stores on a fresh PostgreSQL database, without verticles: for store-level and race tests. A JUnit
 * extension: opened before the class's own {@code @BeforeAll} methods, closed after its tests.
 */
public final class StoreFixture implements BeforeAllCallback, AfterAllCallback {
  private final int poolSize;
  public Vertx vertx;
  public Pool pool;
  public TaskStore tasks;
  public NodeStore nodes;
  public BindStore binds;
  public BatchBindStore batchBinds;

  /** Use as {@code @RegisterExtension static final StoreFixture store = new StoreFixture(poolSize);}. */
  public StoreFixture(int poolSize) {
    this.poolSize = poolSize;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    vertx = Vertx.vertx();
    Database database = TestPostgres.freshDatabase();
    pool = await(database.migrateAndOpen(vertx, poolSize));
    tasks = new TaskStore(pool);
    nodes = new NodeStore(pool);
    binds = new BindStore(pool, SchedulerConfig.defaults());
    batchBinds = new BatchBindStore(pool, SchedulerConfig.defaults(), binds);
  }

  public void node(String id, int cards) throws Exception {
    node(id, cards, new JsonArray());
  }

  /** A node reporting these internal addresses (CIDR form, for network domains). */
  public void node(String id, int cards, JsonArray internalIps) throws Exception {
    JsonArray cardReports = new JsonArray();
    for (int i = 0; i < cards; i++) {
      cardReports.add(new JsonObject().put("index", i).put("model", "A100").put("memory_total_mb", 81920)
          .put("memory_used_mb", 0).put("utilization_percent", 0).put("temperature_c", 40));
    }
    await(nodes.applyHeartbeat(Heartbeat.fromJson(new JsonObject().put("node_id", id).put("boot_id", "b1").put("seq", 1)
        .put("gpu_vendor", "nvidia").put("cpu_cores", 64).put("cpu_percent", 5.0).put("memory_total_gb", 512.0)
        .put("memory_used_mb", 1024).put("cards", cardReports).put("internal_ips", internalIps))));
  }

  public TaskRecord task(int gpus) throws Exception {
    return task("job", gpus);
  }

  public TaskRecord task(String type, int gpus) throws Exception {
    TaskSpec spec = new TaskSpec("t", type, null, List.of("true"), Map.of(), 50, false, gpus, 0, null, List.of(),
        0, 0, 60, 10, null, Map.of(), Map.of());
    return await(tasks.create("default", spec, null, "x")).task();
  }

  public TaskRecord reload(UUID id) throws Exception {
    return await(tasks.get(id)).orElseThrow();
  }

  public RowSet<Row> query(String sql, Object... params) throws Exception {
    return await(pool.preparedQuery(sql).execute(Tuple.from(params)));
  }

  public long count(String sql, Object... params) throws Exception {
    return query(sql, params).iterator().next().getLong(0);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    await(pool.close());
    await(vertx.close());
  }
}
