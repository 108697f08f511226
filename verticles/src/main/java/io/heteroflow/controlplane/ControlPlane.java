package io.heteroflow.controlplane;

import io.heteroflow.controlplane.api.ApiVerticle;
import io.heteroflow.controlplane.cluster.Leadership;
import io.heteroflow.controlplane.cluster.LeadershipVerticle;
import io.heteroflow.controlplane.cluster.RecoveryVerticle;
import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.registry.NodeRegistryVerticle;
import io.heteroflow.controlplane.metrics.ClusterGauges;
import io.heteroflow.controlplane.scheduler.BindVerticle;
import io.heteroflow.controlplane.scheduler.SchedulerLoopVerticle;
import io.heteroflow.controlplane.store.Database;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.time.Clock;
import java.util.EnumSet;

/**
 * Deploys one control-plane process: migrates PostgreSQL, opens the pool, seeds plugin defaults, then
 * deploys the node-registry, scheduler-loop and api verticles together.
 */
public final class ControlPlane {
  private ControlPlane() {}

  /** How to run it. */
  public record Options(String httpHost, int httpPort, String adminToken, SchedulerConfig config,
                        int offlineGraceSeconds, long ledgerCheckMs, int poolSize, int leaseSeconds,
                        long leaderBeatMs, long recoveryMs) {
    public static final long LEDGER_CHECK_MS = 30_000;
    public static final int LEASE_SECONDS = 2;
    public static final long LEADER_BEAT_MS = 500;
    public static final long RECOVERY_MS = 60_000;

    public static Options defaults(int httpPort, String adminToken, SchedulerConfig config) {
      return new Options("0.0.0.0", httpPort, adminToken, config, 15, LEDGER_CHECK_MS, 16, LEASE_SECONDS,
          LEADER_BEAT_MS, RECOVERY_MS);
    }

    public Options withLedgerCheckMs(long value) {
      return new Options(httpHost, httpPort, adminToken, config, offlineGraceSeconds, value, poolSize, leaseSeconds,
          leaderBeatMs, recoveryMs);
    }

    public Options withHttp(String host, int port) {
      return new Options(host, port, adminToken, config, offlineGraceSeconds, ledgerCheckMs, poolSize, leaseSeconds,
          leaderBeatMs, recoveryMs);
    }
  }

  /** A running control plane. */
  public record Running(Services services, ApiVerticle api) {
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
        .setLabels(EnumSet.of(Label.EB_ADDRESS, Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE));
    return Vertx.builder().with(options.setMetricsOptions(metrics))
        .withMetrics(new MicrometerMetricsFactory(registry));
  }

  public static PrometheusMeterRegistry newMeterRegistry() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  /** How often the cluster-state gauges of /metrics are read from PostgreSQL. */
  public static final long GAUGE_REFRESH_MS = 5000;

  public static Future<Running> deploy(Vertx vertx, Database database, Options options,
                                       PrometheusMeterRegistry registry) {
    return database.migrateAndOpen(vertx, options.poolSize()).compose(pool -> {
      Leadership leadership = Leadership.newMember(hostName());
      Services services = Services.create(pool, options.config(), leadership, registry, options.adminToken());
      ApiVerticle api = new ApiVerticle(services, options.httpHost(), options.httpPort());
      return services.plugins().seedDefaults(services.registry())
          .compose(v -> Future.all(
              vertx.deployVerticle(new NodeRegistryVerticle(services, options.offlineGraceSeconds(),
                  options.ledgerCheckMs())),
              vertx.deployVerticle(new SchedulerLoopVerticle(services, Clock.systemUTC())),
              vertx.deployVerticle(new BindVerticle(services)),
              vertx.deployVerticle(new ClusterGauges(services, GAUGE_REFRESH_MS)),
              vertx.deployVerticle(new RecoveryVerticle(services, options.recoveryMs(),
                  4 * options.offlineGraceSeconds())),
              vertx.deployVerticle(api)))
          .compose(all -> vertx.deployVerticle(new LeadershipVerticle(leadership, services.leaders(), hostName(),
              api.actualPort(), options.leaseSeconds(), options.leaderBeatMs())))
          .map(leader -> new Running(services, api));
    });
  }

  static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      return "localhost";
    }
  }
}
