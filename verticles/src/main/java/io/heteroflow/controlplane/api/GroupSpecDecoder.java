package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.GroupSpec;
import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.GpuVendor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Strict decoding of {@code POST /api/v1/groups}: {@code {name, type, gpu_type?, parallelism?, members,
 * restart_policy?}} where {@code members} is a list of task specs or {@code {template, count}}. A member takes the
 * group's type and gpu_type when it names none and may not name others; all members share one priority (the group
 * is queued as one). Every refusal names its field by its path ({@code members[3].gpu_required}).
 */
final class GroupSpecDecoder {
  private GroupSpecDecoder() {}

  static final Set<String> FIELDS = Set.of("name", "type", "gpu_type", "parallelism", "members", "restart_policy",
      "queue");
  private static final Set<String> TYPES = Set.of("job", "training", "inference");
  private static final Set<String> PARALLELISMS = Set.of("tensor", "data", "pipeline");

  static GroupSpec decode(Buffer body, int defaultTimeout) {
    StrictJson json = StrictJson.parse(body, FIELDS);
    String name = json.requiredString("name", 128, TaskSpecDecoder.NAME);
    String type = json.string("type", "training", 16, null);
    if (!TYPES.contains(type)) {
      throw ApiError.badField("type", "must be one of training, inference, job (was '" + StrictJson.printable(type) + "')");
    }
    String gpuType = json.string("gpu_type", null, 32, null);
    if (gpuType != null) {
      gpuType = GpuVendor.fromId(gpuType).map(GpuVendor::id).orElseThrow(() -> ApiError.badField("gpu_type",
          "must be one of musa, hygon, cambricon, biren, ascend, kunlun, iluvatar, nvidia, metax, enflame"));
    }
    String parallelism = json.string("parallelism", null, 16, null);
    if (parallelism != null && !PARALLELISMS.contains(parallelism)) {
      throw ApiError.badField("parallelism", "must be one of tensor, data, pipeline (was '"
          + StrictJson.printable(parallelism) + "')");
    }
    int maxRestarts = maxRestarts(json.object("restart_policy"));
    List<JsonObject> declared = memberObjects(json);
    boolean templated = json.presentFields().get("members") instanceof JsonObject;
    List<TaskSpec> members = new ArrayList<>();
    for (int i = 0; i < declared.size(); i++) {
      String path = templated ? "members.template." : "members[" + i + "].";
      JsonObject member = declared.get(i);
      try {
        members.add(member(member, type, gpuType, defaultTimeout));
      } catch (ApiError refused) {
        throw refused.within(path);
      }
      TaskSpec first = members.get(0);
      if (members.get(i).priority() != first.priority()) {
        throw ApiError.badField(path + "priority", "must equal members[0].priority (" + first.priority()
            + "): a group is queued as one");
      }
    }
    if (templated) {
      String base = members.get(0).name().substring(0, Math.min(members.get(0).name().length(), 122));
      for (int i = 0; i < members.size(); i++) {
        members.set(i, members.get(i).with(base + "-" + i, members.get(i).gpuType()));
      }
    }
    return new GroupSpec(name, type, gpuType, parallelism, maxRestarts, members,
        json.string("queue", null, 63, QueueSpecDecoder.NAME));
  }

  private static int maxRestarts(JsonObject policy) {
    if (policy == null) {
      return 0;
    }
    try {
      StrictJson read = StrictJson.of(policy, "max_restarts"::equals);
      return (int) read.integer("max_restarts", 0, 0, GroupSpec.MAX_RESTARTS);
    } catch (ApiError refused) {
      throw refused.within("restart_policy.");
    }
  }

  /** The members as objects: the list as given, or the template repeated {@code count} times. */
  private static List<JsonObject> memberObjects(StrictJson json) {
    if (!json.has("members")) {
      throw ApiError.badField("members", "is required: a list of task specs or {template, count}");
    }
    JsonObject template = json.presentFields().get("members") instanceof JsonObject given ? given : null;
    List<JsonObject> members = new ArrayList<>();
    if (template != null) {
      StrictJson read;
      JsonObject spec;
      int count;
      try {
        read = StrictJson.of(template, field -> field.equals("template") || field.equals("count"));
        spec = read.object("template");
        count = (int) read.integer("count", 0, 1, GroupSpec.MAX_MEMBERS);
      } catch (ApiError refused) {
        throw refused.within("members.");
      }
      if (spec == null || !read.has("count")) {
        throw ApiError.badField(spec == null ? "members.template" : "members.count", "is required");
      }
      JsonObject named = spec.copy();
      if (!named.containsKey("name")) {
        named.put("name", json.requiredString("name", 128, TaskSpecDecoder.NAME));
      }
      for (int i = 0; i < count; i++) {
        members.add(named);
      }
      return members;
    }
    if (!(json.presentFields().get("members") instanceof JsonArray list)) {
      throw ApiError.badField("members", "must be a list of task specs or {template, count}");
    }
    if (list.isEmpty() || list.size() > GroupSpec.MAX_MEMBERS) {
      throw ApiError.badField("members", "must have 1 to " + GroupSpec.MAX_MEMBERS + " members (had " + list.size() + ")");
    }
    for (int i = 0; i < list.size(); i++) {
      if (!(list.getValue(i) instanceof JsonObject member)) {
        throw ApiError.badField("members[" + i + "]", "must be a task spec object");
      }
      members.add(member);
    }
    return members;
  }

  /**
   * One member (or a service's replica template): a task spec that takes the group's type and gpu_type unless it
   * names the same.
   */
  static TaskSpec member(JsonObject given, String type, String gpuType, int defaultTimeout) {
    JsonObject member = given.copy();
    Object ownType = member.getValue("type");
    if (ownType != null && !type.equals(ownType)) {
      throw ApiError.badField("type", "must be the group's type '" + type + "' or absent");
    }
    member.put("type", type);
    TaskSpec spec = TaskSpecDecoder.decodeMember(member, defaultTimeout);
    if (gpuType != null && spec.gpuType() != null && !gpuType.equals(spec.gpuType())) {
      throw ApiError.badField("gpu_type", "must be the group's gpu_type '" + gpuType + "' or absent");
    }
    return gpuType == null || Objects.equals(spec.gpuType(), gpuType) ? spec : spec.with(spec.name(), gpuType);
  }
}
