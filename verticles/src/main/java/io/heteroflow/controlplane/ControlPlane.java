package io.heteroflow.controlplane;

import io.heteroflow.controlplane.api.ApiRouter;
import io.heteroflow.controlplane.api.ApiVerticle;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.cluster.LeadershipVerticle;
import io.heteroflow.controlplane.cluster.BorrowPatrolVerticle;
import io.heteroflow.controlplane.cluster.PreemptWatchdogVerticle;
import io.heteroflow.controlplane.cluster.RecoveryVerticle;
import io.heteroflow.controlplane.cluster.AutoscalerVerticle;
import io.heteroflow.controlplane.cluster.ReplicaRebuildVerticle;
import io.heteroflow.controlplane.cluster.WindowCheckerVerticle;
import io.heteroflow.controlplane.cluster.TaskStops;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.registry.AgentBridgeVerticle;
import io.heteroflow.controlplane.registry.NodeRegistryVerticle;
import io.heteroflow.controlplane.metrics.ClusterGauges;
import io.heteroflow.controlplane.scheduler.BindVerticle;
import io.heteroflow.controlplane.scheduler.SchedulerLoopVerticle;
import io.heteroflow.controlplane.cluster.GroupLifecycleVerticle;
import io.heteroflow.controlplane.scheduler.framework.PluginRegistry;
import io.heteroflow.controlplane.scheduler.framework.SchedulingPipeline;
import io.heteroflow.controlplane.scheduler.plugins.BuiltInPlugins;
import io.heteroflow.controlplane.store.Database;
import io.heteroflow.controlplane.store.Stores;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.Match;
import io.vertx.micrometer.MatchType;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.time.Clock;
import java.util.List;
import java.util.EnumSet;

/**
 * The composition root of one control-plane process: builds the stores, the scheduling core and the metrics,
 * and deploys the verticles, handing each only what it uses.
 */
public final class ControlPlane {
  private ControlPlane() {}

  /**
   * How to run it. {@code clock} is what the service beats (rebuild back-off, schedule windows) read: tests inject
   * one to cross window edges without waiting.
   */
  public record Options(String httpHost, int httpPort, String adminToken, SchedulerConfig config,
                        int offlineGraceSeconds, long ledgerCheckMs, int poolSize, int leaseSeconds,
                        long leaderBeatMs, long recoveryMs, ServiceBeats services, Clock clock,
                        ApiVerticle.Timeouts httpTimeouts, ApiVerticle.Tls httpTls,
                        AgentBridgeVerticle.Options agentBridge, int preemptTimeoutSeconds) {
    public static final long LEDGER_CHECK_MS = 30_000;
    public static final int LEASE_SECONDS = 2;
    public static final long LEADER_BEAT_MS = 500;
    public static final long RECOVERY_MS = 60_000;

    public static Options defaults(int httpPort, String adminToken, SchedulerConfig config) {
      return new Options("0.0.0.0", httpPort, adminToken, config, 15, LEDGER_CHECK_MS, 16, LEASE_SECONDS,
          LEADER_BEAT_MS, RECOVERY_MS, ServiceBeats.DEFAULTS, Clock.systemUTC(), ApiVerticle.Timeouts.DEFAULTS,
          null, null, PreemptWatchdogVerticle.TIMEOUT_SECONDS);
    }

    public Options withLedgerCheckMs(long value) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, value, poolSize, leaseSeconds,
          leaderBeatMs, recoveryMs, services, clock, httpTimeouts, httpTls, agentBridge, preemptTimeoutSeconds);
    }

    /** How long a silent node stays online (15 s by default; the benchmarks' own heartbeat timers lag under load). */
    public Options withOfflineGraceSeconds(int seconds) {
      return new Options(httpHost, httpPort, adminToken, config, seconds, ledgerCheckMs, poolSize, leaseSeconds,
          leaderBeatMs, recoveryMs, services, clock, httpTimeouts, httpTls, agentBridge, preemptTimeoutSeconds);
    }

    public Options withHttp(String host, int port) {
      return new Options(host, port, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize, leaseSeconds,
          leaderBeatMs, recoveryMs, services, clock, httpTimeouts, httpTls, agentBridge, preemptTimeoutSeconds);
    }

    /** The API server's idle and header-read timeouts (60 s and 10 s by default). */
    public Options withHttpTimeouts(ApiVerticle.Timeouts timeouts) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize,
          leaseSeconds, leaderBeatMs, recoveryMs, services, clock, timeouts, httpTls, agentBridge,
          preemptTimeoutSeconds);
    }

    /** HTTPS for the API and the UI (null: plain HTTP, the default). */
    public Options withHttpTls(ApiVerticle.Tls tls) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize,
          leaseSeconds, leaderBeatMs, recoveryMs, services, clock, httpTimeouts, tls, agentBridge,
          preemptTimeoutSeconds);
    }

    /** The agents' TCP bridge under mutual TLS (null: none, the default; agents are then cluster members). */
    public Options withAgentBridge(AgentBridgeVerticle.Options bridge) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize,
          leaseSeconds, leaderBeatMs, recoveryMs, services, clock, httpTimeouts, httpTls, bridge,
          preemptTimeoutSeconds);
    }

    /**
     * How long an agent has to confirm a preemption before the preempt watchdog forces it (60 s by default, plus the
     * victim's checkpoint timeout and grace above 10 s); the watchdog looks every half of it (30 s by default).
     */
    public Options withPreemptTimeoutSeconds(int seconds) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize,
          leaseSeconds, leaderBeatMs, recoveryMs, services, clock, httpTimeouts, httpTls, agentBridge,
          PreemptWatchdogVerticle.checkTimeout("preempt timeout", seconds));
    }

    public Options withServices(ServiceBeats beats, Clock serviceClock) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize,
          leaseSeconds, leaderBeatMs, recoveryMs, beats, serviceClock, httpTimeouts, httpTls, agentBridge,
          preemptTimeoutSeconds);
    }
  }

  /**
   * The inference-service beats (SPEC §2, §9): rebuild every 10 s, schedule windows every 60 s, the autoscaler
   * sampling card utilisation every 10 s and deciding every 30 s on the last 60 s.
   */
  public record ServiceBeats(long rebuildMs, long windowMs, long sampleMs, long decideMs, int utilizationSeconds) {
    public static final ServiceBeats DEFAULTS = new ServiceBeats(10_000, 60_000, 10_000, 30_000, 60);
  }

  /**
   * A running control plane, for programs that drive it from outside (tests, the benchmark): its stores, its
   * view of leadership, the scheduling core it runs, and the HTTP server.
   */
  public record Running(Stores stores, Leadership leadership, PluginRegistry registry, SchedulingPipeline pipeline,
                        ApiVerticle api, int agentBridgePort) {
    public int httpPort() {
      return api.actualPort();
    }

  }

  /**
   * A Vert.x builder whose HTTP, event-bus and pool metrics go to {@code registry}, the same registry the
   * control plane serves on /metrics.
   */
  public static VertxBuilder vertxBuilder(PrometheusMeterRegistry registry, VertxOptions options) {
    MicrometerMetricsOptions metrics = new MicrometerMetricsOptions().setEnabled(true)
        .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true))
        .setLabels(EnumSet.of(Label.EB_ADDRESS, Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE))
        // one series for every agent's run, stop and logs address, not one per node (thousands)
        .addLabelMatch(new Match().setDomain(MetricsDomain.EVENT_BUS).setLabel(Label.EB_ADDRESS.toString())
            .setType(MatchType.REGEX).setValue("heteroflow\\.agent\\..+").setAlias("heteroflow.agent.NODE"));
    return Vertx.builder().with(options.setMetricsOptions(metrics))
        .withMetrics(new MicrometerMetricsFactory(registry));
  }

  public static PrometheusMeterRegistry newMeterRegistry() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /** How often the cluster-state gauges of /metrics are read from PostgreSQL. */
  public static final long GAUGE_REFRESH_MS = 5000;

  /**
   * One compose chain: HTTP listens first (answering 503 "starting", so a probe during start-up is answered),
   * then PostgreSQL is migrated and the pool opened, the plugin defaults seeded, the verticles deployed together
   * (each completes once its bus consumers are registered, cluster-wide on a clustered bus), then leadership
   * campaigns, and only then the API router is served. Each verticle gets only what it uses.
   */
  public static Future<Running> deploy(Vertx vertx, Database database, Options options,
                                       PrometheusMeterRegistry registry) {
    ApiVerticle api = new ApiVerticle(options.httpHost(), options.httpPort(), options.httpTimeouts(),
        options.httpTls());
    SchedulerConfig config = options.config();
    Leadership leadership = Leadership.newMember(hostName());
    ControlPlaneMetrics metrics = new ControlPlaneMetrics(registry);
    PluginRegistry plugins = BuiltInPlugins.registry(config);
    SchedulingPipeline pipeline = BuiltInPlugins.pipeline(config);
    int grace = options.offlineGraceSeconds();
    return vertx.deployVerticle(api)
        .compose(id -> database.migrateAndOpen(vertx, options.poolSize()))
        .map(pool -> Stores.on(pool, config, leadership.memberId()))
        .compose(stores -> stores.plugins().seedDefaults(plugins)
            .compose(v -> Future.all(List.of(
                vertx.deployVerticle(new NodeRegistryVerticle(stores.nodes(), stores.tasks(), leadership, metrics,
                    grace, options.ledgerCheckMs())),
                vertx.deployVerticle(new SchedulerLoopVerticle(stores.tasks(), stores.nodes(), stores.preemptions(), stores.groups(), stores.queues(),
                    stores.plans(), config.queueing(),
                    stores.plugins(),
                    plugins, pipeline, leadership, metrics, Clock.systemUTC(), options.preemptTimeoutSeconds())),
                vertx.deployVerticle(new BindVerticle(stores.batchBinds(), metrics)),
                vertx.deployVerticle(new io.heteroflow.controlplane.api.TaskEventRelay(
                    new io.heteroflow.controlplane.store.TaskEventFeed(stores.pool()), 250, 2000,
                    java.time.Clock.systemUTC())),
                vertx.deployVerticle(new GroupLifecycleVerticle(stores.groups(), stores.tasks(), leadership, metrics,
                    GroupLifecycleVerticle.PERIOD_MS)),
                vertx.deployVerticle(new ClusterGauges(stores.nodes(), stores.tasks(), stores.leaders(), stores.queues(),
                    stores.services(), registry,
                    GAUGE_REFRESH_MS)),
                vertx.deployVerticle(new RecoveryVerticle(stores.tasks(), leadership, options.recoveryMs(), 4 * grace)),
                vertx.deployVerticle(new PreemptWatchdogVerticle(stores.tasks(), leadership, metrics,
                    PreemptWatchdogVerticle.periodMs(options.preemptTimeoutSeconds()),
                    options.preemptTimeoutSeconds())),
                vertx.deployVerticle(new BorrowPatrolVerticle(stores.queues(), leadership,
                    BorrowPatrolVerticle.PERIOD_MS, config.queueing().borrowIdleSeconds())),
                vertx.deployVerticle(new ReplicaRebuildVerticle(stores.services(),
                    new TaskStops(vertx, stores.tasks()), leadership, metrics,
                    options.clock(), options.services().rebuildMs())),
                vertx.deployVerticle(new WindowCheckerVerticle(stores.services(),
                    new TaskStops(vertx, stores.tasks()), leadership, metrics,
                    options.clock(), options.services().windowMs())),
                vertx.deployVerticle(new AutoscalerVerticle(stores.services(), leadership, metrics,
                    options.services())))))
            .compose(all -> options.agentBridge() == null ? Future.succeededFuture(0)
                : AgentBridgeVerticle.deploy(vertx, options.agentBridge(), metrics))
            // the lease's own connection: its renewal every half second never waits behind heartbeat batches for a
            // connection of the shared pool (at 5,000 agents it did, and the leader lost its 2 s lease)
            .compose(bridgePort -> vertx.deployVerticle(new LeadershipVerticle(leadership,
                new io.heteroflow.controlplane.store.LeaderStore(database.open(vertx, 1)), hostName(),
                api.actualPort(), options.leaseSeconds(), options.leaderBeatMs()))
                .map(leader -> {
                  api.serve(new ApiRouter(options.adminToken(), config, stores, leadership, plugins, metrics, registry,
                      options.clock())
                      .create(vertx));
                  return new Running(stores, leadership, plugins, pipeline, api, bridgePort);
                })));
  }

  static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }
}
