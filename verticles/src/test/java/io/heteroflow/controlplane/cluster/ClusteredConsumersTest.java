package io.heteroflow.controlplane.cluster;

import static io.heteroflow.testsupport.ControlPlaneHarness.AWAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hazelcast.config.Config;
import com.hazelcast.config.FileSystemXmlConfig;
import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.registry.NodeRegistryVerticle;
import io.heteroflow.controlplane.scheduler.BindVerticle;
import io.heteroflow.controlplane.scheduler.SchedulerLoopVerticle;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.Stores;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.TestPostgres;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Completable;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * On the clustered bus (Hazelcast, conf/cluster.xml, a cluster name of this run's own), a deployment that has
 * completed can be reached from another member at once: every verticle's {@code start()} completes only when its
 * consumers are registered cluster-wide. Each address is asked exactly once, with no retry; an empty body is
 * refused by the consumer (400, a RECIPIENT_FAILURE), which proves a consumer answered, where a registration not
 * yet known to the cluster would fail with NO_HANDLERS. On loopback a registration reaches the cluster within a
 * millisecond or so, which a test thread rarely beats; here each takes {@link #PROPAGATION_MS}, as on a slow
 * network, so a start() that did not wait for its registrations fails every time.
 */
class ClusteredConsumersTest {
  static final long PROPAGATION_MS = 500;
  private final List<Vertx> members = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    java.util.Collections.reverse(members); // the lite member first: alone, it could hold no cluster data
    for (Vertx member : members) {
      member.close().await(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void everyAddressAnswersFromAnotherMemberAsSoonAsItsDeploymentCompletes() throws Exception {
    String cluster = "heteroflow-test-" + UUID.randomUUID();
    PrometheusMeterRegistry registry = ControlPlane.newMeterRegistry();
    // the data member first: a cluster of lite members alone holds no data (Vert.x's maps would wait)
    Vertx controlPlane = join(ControlPlane.vertxBuilder(registry, busOnLoopback()), cluster, false);
    Vertx agentSide = join(Vertx.builder().with(busOnLoopback()), cluster, true);
    Database database = TestPostgres.freshDatabase();

    // each verticle alone (in a parallel deployment, a slower sibling would hide one that does not wait)
    Stores stores = Stores.on(database.migrateAndOpen(controlPlane, 4).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS),
        SchedulerConfig.defaults());
    Leadership leadership = Leadership.newMember("clustered");
    ControlPlaneMetrics metrics = new ControlPlaneMetrics(registry);
    Map<Supplier<Deployable>, List<String>> verticles = new LinkedHashMap<>();
    verticles.put(() -> new NodeRegistryVerticle(stores.nodes(), stores.tasks(), leadership, metrics, 15, 60_000),
        List.of(BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_RELEASE, BusAddresses.TASK_CLAIM,
            BusAddresses.TASK_REPORT));
    verticles.put(() -> new BindVerticle(stores.batchBinds(), metrics), List.of(BusAddresses.SCHEDULER_BIND));
    verticles.put(() -> new SchedulerLoopVerticle(stores.tasks(), stores.nodes(), stores.preemptions(), stores.groups(), stores.queues(),
                    stores.plans(), SchedulerConfig.defaults().queueing(), stores.plugins(),
        BuiltInPlugins.registry(SchedulerConfig.defaults()), BuiltInPlugins.pipeline(SchedulerConfig.defaults()),
        leadership, metrics, Clock.systemUTC(), PreemptWatchdogVerticle.TIMEOUT_SECONDS),
        List.of(BusAddresses.SCHEDULER_KICK));
    for (Map.Entry<Supplier<Deployable>, List<String>> verticle : verticles.entrySet()) {
      String id = controlPlane.deployVerticle(verticle.getKey().get()).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
      verticle.getValue().forEach(address -> assertAnswered(agentSide, address));
      controlPlane.undeploy(id).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    }
    stores.pool().close().await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);

    // the whole control plane: once deploy has completed
    ControlPlane.deploy(controlPlane, database, ControlPlane.Options.defaults(0, "token", SchedulerConfig.defaults())
        .withHttp("127.0.0.1", 0), registry).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    for (String address : List.of(BusAddresses.NODE_HEARTBEAT, BusAddresses.NODE_RELEASE, BusAddresses.TASK_CLAIM,
        BusAddresses.TASK_REPORT, BusAddresses.SCHEDULER_BIND, BusAddresses.SCHEDULER_KICK)) {
      assertAnswered(agentSide, address);
    }

    // an agent, asked from the control plane's member
    String node = "clustered-1";
    agentSide.deployVerticle(new AgentVerticle(ControlPlaneHarness.node(node, GpuVendor.NVIDIA, 1),
        new ProcessExecutor(agentSide, Files.createTempDirectory("heteroflow-clustered-"), 1, Duration.ofSeconds(1)),
        60_000)).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    for (String address : List.of(BusAddresses.agentRun(node), BusAddresses.agentStop(node),
        BusAddresses.agentLogs(node))) {
      assertAnswered(controlPlane, address);
    }
  }

  /** One request from {@code from}: answered, or refused by the consumer, never "no handlers". */
  private static void assertAnswered(Vertx from, String address) {
    Future<Object> reply = from.eventBus().request(address, new JsonObject(),
        new DeliveryOptions().setSendTimeout(10_000)).map(message -> message.body());
    try {
      reply.await(20, TimeUnit.SECONDS);
    } catch (ReplyException e) {
      assertEquals(ReplyFailure.RECIPIENT_FAILURE, e.failureType(), address + ": " + e.getMessage());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError(address + ": no answer", e);
    }
  }

  private static VertxOptions busOnLoopback() {
    VertxOptions options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1");
    return options;
  }

  private Vertx join(io.vertx.core.VertxBuilder builder, String cluster, boolean lite) throws Exception {
    Config config = new FileSystemXmlConfig("../conf/cluster.xml");
    config.setClusterName(cluster);
    config.setLiteMember(lite);
    Vertx vertx = builder.withClusterManager(new SlowRegistrations(config)).buildClustered()
        .await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    members.add(vertx);
    return vertx;
  }

  /** Hazelcast whose every consumer registration takes {@link #PROPAGATION_MS} to reach the cluster. */
  private static final class SlowRegistrations extends HazelcastClusterManager {
    private Vertx vertx;

    SlowRegistrations(Config config) {
      super(config);
    }

    @Override
    public void init(Vertx vertx) {
      this.vertx = vertx;
      super.init(vertx);
    }

    @Override
    public void addRegistration(String address, RegistrationInfo info, Completable<Void> done) {
      vertx.setTimer(PROPAGATION_MS, id -> super.addRegistration(address, info, done));
    }
  }
}
