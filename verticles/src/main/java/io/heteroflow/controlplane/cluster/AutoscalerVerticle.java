package io.heteroflow.controlplane.cluster;

import io.heteroflow.controlplane.ControlPlane;
import io.heteroflow.controlplane.ControlPlaneMetrics;
import io.heteroflow.controlplane.service.Autoscale;
import io.heteroflow.controlplane.store.GroupRecord;
import io.heteroflow.controlplane.store.ServiceStore;
import io.heteroflow.protocol.BusAddresses;
import io.heteroflow.protocol.message.Kick;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The autoscaler (issue 17, leader only). Every 10 s it samples the mean utilisation of the cards each autoscaled
 * service's running replicas hold, as the heartbeats wrote them, into PostgreSQL; every 30 s it decides per
 * service on the samples of the last 60 s taken since its count last changed (at least half the window of them,
 * so a new leader or a fresh replica is judged on a full picture): above target + 10 points one replica more,
 * below target − 20 one fewer (the newest, stopped gracefully by the rebuild), within [min, max]. A service whose
 * window owns its count is skipped, and nothing is added for an inactive tenant. Each decision goes to the
 * group's events with its inputs.
 */
public final class AutoscalerVerticle extends VerticleBase {
  private final ServiceStore services;
  private final Leadership leadership;
  private final ControlPlaneMetrics metrics;
  private final ControlPlane.ServiceBeats beats;
  private SerialPass sampling;
  private SerialPass deciding;

  public AutoscalerVerticle(ServiceStore services, Leadership leadership, ControlPlaneMetrics metrics,
                            ControlPlane.ServiceBeats beats) {
    this.services = services;
    this.leadership = leadership;
    this.metrics = metrics;
    this.beats = beats;
  }

  @Override
  public Future<?> start() {
    sampling = new SerialPass("autoscale sampling", leadership, this::sample);
    deciding = new SerialPass("autoscale decision", leadership, this::decide);
    vertx.setPeriodic(beats.sampleMs(), id -> sampling.request());
    vertx.setPeriodic(beats.decideMs(), id -> deciding.request());
    return Future.succeededFuture();
  }

  private Future<List<ServiceStore.Service>> autoscaled() {
    return services.running(1000).map(running -> running.stream()
        .filter(service -> service.group().autoscale() != null && !service.group().windowOwns()).toList());
  }

  public Future<Void> sample() {
    return autoscaled().compose(found -> found.isEmpty() ? Future.succeededFuture()
        : services.sampleUtilization(found.stream().map(service -> service.group().id()).toList()));
  }

  /** One decision per autoscaled service; answers how many counts changed. */
  public Future<Integer> decide() {
    int minSamples = (int) Math.max(2, beats.utilizationSeconds() * 1000L / beats.sampleMs() / 2);
    return autoscaled().compose(found -> services.utilization(found.stream().map(service -> service.group().id())
        .toList(), beats.utilizationSeconds()).compose(utilization -> {
          List<Future<Boolean>> changed = new ArrayList<>();
          for (ServiceStore.Service service : found) {
            ServiceStore.Utilization seen = utilization.get(service.group().id());
            if (seen != null && seen.samples() >= minSamples) {
              changed.add(decide(service, seen));
            }
          }
          return SerialPass.changed(changed).onSuccess(count -> {
            if (count > 0) {
              vertx.eventBus().publish(BusAddresses.SERVICES_KICK, Kick.because("autoscaled").toJson());
            }
          });
        }));
  }

  private Future<Boolean> decide(ServiceStore.Service service, ServiceStore.Utilization seen) {
    GroupRecord group = service.group();
    Autoscale autoscale = Autoscale.fromJson(group.autoscale());
    int current = group.desiredReplicas();
    int target = autoscale.decide(current, seen.meanPercent());
    if (target == current || (target > current && !service.tenantActive())) {
      return Future.succeededFuture(false);
    }
    String direction = target > current ? "up" : "down";
    JsonObject inputs = new JsonObject().put("mean_gpu_utilization_percent", Math.round(seen.meanPercent() * 10) / 10.0)
        .put("samples", seen.samples()).put("window_seconds", beats.utilizationSeconds())
        .put("target_gpu_utilization_percent", autoscale.targetPercent()).put("min", autoscale.min())
        .put("max", autoscale.max()).put("from", current).put("to", target);
    String message = String.format("autoscale %s: %d → %d replicas (mean GPU utilisation %.1f %% over %d samples,"
        + " target %d %%)", direction, current, target, seen.meanPercent(), seen.samples(), autoscale.targetPercent());
    return services.setReplicas(group, target, false, null, "autoscale", message, inputs).map(Optional::isPresent)
        .onSuccess(done -> {
          if (done) {
            metrics.autoscaled(group.name(), direction);
          }
        });
  }
}
