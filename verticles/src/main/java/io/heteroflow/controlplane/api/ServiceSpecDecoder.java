package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.service.Autoscale;
import io.heteroflow.controlplane.service.ScheduleWindows;
import io.heteroflow.controlplane.store.ServiceSpec;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.util.Set;

/**
 * Strict decoding of an inference service, {@code POST /api/v1/groups} with {@code replicas}: {@code {name,
 * type: "inference", replicas, template, autoscale?: {min, max, target_gpu_utilization_percent}, windows?, queue?,
 * gpu_type?}}. The template is a task spec of type inference (its name defaults to the service's; its timeout to
 * 30 days: a replica runs until it is stopped). Each refusal names its field ({@code template.gpu_required},
 * {@code autoscale.max}, {@code windows.open[0].from}).
 */
final class ServiceSpecDecoder {
  private ServiceSpecDecoder() {}

  static final Set<String> FIELDS = Set.of("name", "type", "gpu_type", "replicas", "template", "autoscale", "windows",
      "queue");
  /** Fields that make a group body a service (the others are shared with gangs). */
  private static final Set<String> SERVICE_ONLY = Set.of("replicas", "template", "autoscale", "windows");

  /** Whether a group body declares a service rather than a gang. */
  static boolean declaresService(Buffer body) {
    StrictJson json = StrictJson.parse(body, field -> true);
    return SERVICE_ONLY.stream().anyMatch(json::has);
  }

  static ServiceSpec decode(Buffer body) {
    StrictJson json = StrictJson.parse(body, FIELDS);
    String name = json.requiredString("name", 122, TaskSpecDecoder.NAME);
    String type = json.string("type", "inference", 16, null);
    if (!"inference".equals(type)) {
      throw ApiError.badField("type", "must be inference for a group with replicas (was '"
          + StrictJson.printable(type) + "'): only inference services have replicas; a gang declares members");
    }
    String gpuType = json.string("gpu_type", null, 32, null);
    if (gpuType != null) {
      gpuType = GpuVendor.fromId(gpuType).map(GpuVendor::id).orElseThrow(() -> ApiError.badField("gpu_type",
          "must be one of musa, hygon, cambricon, biren, ascend, kunlun, iluvatar, nvidia, metax, enflame"));
    }
    Autoscale autoscale = autoscale(json.object("autoscale"));
    if (!json.has("replicas") && autoscale == null) {
      throw ApiError.badField("replicas", "is required (0 to " + ServiceSpec.MAX_REPLICAS + ")");
    }
    int replicas = (int) json.integer("replicas", autoscale == null ? 0 : autoscale.min(), 0, ServiceSpec.MAX_REPLICAS);
    replicasWithin(autoscale, replicas);
    TaskSpec template = template(json, name, gpuType);
    JsonObject windows = json.object("windows");
    ScheduleWindows decodedWindows = windows == null ? null : WindowSpecDecoder.decode(windows);
    return new ServiceSpec(name, gpuType == null ? template.gpuType() : gpuType, replicas, template, autoscale,
        decodedWindows, json.string("queue", null, 63, QueueSpecDecoder.NAME));
  }

  /** A replica count a service with {@code autoscale} (null: none) may be given: 400 naming replicas otherwise. */
  static void replicasWithin(Autoscale autoscale, int replicas) {
    if (autoscale != null && (replicas < autoscale.min() || replicas > autoscale.max())) {
      throw ApiError.badField("replicas", "must be within autoscale [" + autoscale.min() + ", " + autoscale.max()
          + "] (was " + replicas + ")");
    }
  }

  private static TaskSpec template(StrictJson json, String name, String gpuType) {
    JsonObject given = json.object("template");
    if (given == null) {
      throw ApiError.badField("template", "is required: the task spec every replica runs");
    }
    JsonObject member = given.copy();
    member.put("name", member.getValue("name", name));
    try {
      TaskSpec spec = GroupSpecDecoder.member(member, "inference", gpuType, ServiceSpec.REPLICA_TIMEOUT_SECONDS);
      if (spec.labels().containsKey(ServiceSpec.SERVICE_LABEL)) {
        throw ApiError.badField("labels", ServiceSpec.SERVICE_LABEL + " is set by HeteroFlow on every replica");
      }
      return spec;
    } catch (ApiError refused) {
      throw refused.within("template.");
    }
  }

  private static Autoscale autoscale(JsonObject given) {
    if (given == null) {
      return null;
    }
    try {
      StrictJson read = StrictJson.of(given, Set.of("min", "max", "target_gpu_utilization_percent")::contains);
      for (String field : new String[] {"min", "max", "target_gpu_utilization_percent"}) {
        if (!read.has(field)) {
          throw ApiError.badField(field, "is required");
        }
      }
      int min = (int) read.integer("min", 0, 0, ServiceSpec.MAX_REPLICAS);
      int max = (int) read.integer("max", 0, 1, ServiceSpec.MAX_REPLICAS);
      if (max < min) {
        throw ApiError.badField("max", "must be at least min (" + min + ")");
      }
      int target = (int) read.integer("target_gpu_utilization_percent", 0, 1, 99);
      return new Autoscale(min, max, target);
    } catch (ApiError refused) {
      throw refused.within("autoscale.");
    }
  }
}
