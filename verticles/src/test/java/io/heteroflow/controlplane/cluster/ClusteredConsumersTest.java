package io.heteroflow.controlplane.cluster;

import static io.heteroflow.testsupport.ControlPlaneHarness.AWAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hazelcast.config.Config;
import com.hazelcast.config.FileSystemXmlConfig;
import io.heteroflow.agent.AgentVerticle;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.testsupport.ControlPlaneHarness;
import io.heteroflow.testsupport.TestPostgres;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * On the clustered bus (Hazelcast, conf/cluster.xml, a cluster name of this run's own), a deployment that has
 * completed can be reached from another member at once: every verticle's {@code start()} completes only when its
 * consumers are registered cluster-wide. Each address is asked exactly once, with no retry; an empty body is
 * refused by the consumer (400, a RECIPIENT_FAILURE), which proves a consumer answered, where a registration not
 * yet known to the cluster would fail with NO_HANDLERS.
 */
class ClusteredConsumersTest {
  private final List<Vertx> members = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
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

    ControlPlane.deploy(controlPlane, TestPostgres.freshDatabase(), ControlPlane.Options.defaults(0, "token",
        SchedulerConfig.defaults()).withHttp("127.0.0.1", 0), registry).await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    for (String address : List.of(BusAddresses.NODE_HEARTBEAT, BusAddresses.TASK_CLAIM, BusAddresses.TASK_REPORT,
        BusAddresses.SCHEDULER_BIND, BusAddresses.SCHEDULER_KICK)) {
      assertAnswered(agentSide, address);
    }

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
    Vertx vertx = builder.withClusterManager(new HazelcastClusterManager(config)).buildClustered()
        .await(AWAIT.toMillis(), TimeUnit.MILLISECONDS);
    members.add(vertx);
    return vertx;
  }
}
