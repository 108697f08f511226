package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.TaskSpec;
import io.heteroflow.protocol.GpuVendor;
import io.heteroflow.protocol.TaskEnvironment;
import io.heteroflow.protocol.message.Checkpoint;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Strict decoding of {@code POST /api/v1/tasks} (SPEC §10). */
public final class TaskSpecDecoder {
  private TaskSpecDecoder() {}

  static final Set<String> FIELDS = Set.of("name", "type", "image", "command", "env", "priority", "preemptible",
      "gpu_required", "gpu_memory_mb", "gpu_type", "gpu_model", "cpu_cores", "memory_mb", "timeout_seconds",
      "expected_runtime_seconds", "termination_grace_seconds", "checkpoint", "node_selector", "group_id", "labels", "queue");
  private static final Set<String> TYPES = Set.of("job", "training", "inference");
  static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
  private static final Pattern ENV_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
  static final Pattern LABEL_KEY = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._/-]{0,126}[A-Za-z0-9])?");
  private static final int MAX_GPUS = 128;
  private static final long MAX_GPU_MEMORY_MB = 1L << 20;

  /**
   * {@code checkpoint: {signal, timeout_seconds?}}: a signal of {@link Checkpoint#SIGNALS} (with or without its
   * {@code SIG}), and 1–3600 s to write the checkpoint file (default 120); each refusal names its field.
   */
  private static Checkpoint checkpoint(StrictJson json) {
    JsonObject given = json.object("checkpoint");
    if (given == null) {
      return null;
    }
    for (String key : given.fieldNames()) {
      if (!key.equals("signal") && !key.equals("timeout_seconds")) {
        throw ApiError.unknownField("checkpoint." + StrictJson.printable(key));
      }
    }
    if (!(given.getValue("signal") instanceof String signal)) {
      throw ApiError.badField("checkpoint.signal", "is required and must be " + Checkpoint.allowedSignals());
    }
    String named = Checkpoint.signalNamed(signal);
    if (named == null) {
      throw ApiError.badField("checkpoint.signal", "must be " + Checkpoint.allowedSignals() + " (was '"
          + StrictJson.printable(signal) + "')");
    }
    Object timeout = given.getValue("timeout_seconds", Checkpoint.DEFAULT_TIMEOUT_SECONDS);
    if (!(timeout instanceof Integer seconds) || !Checkpoint.timeoutAllowed(seconds)) {
      throw ApiError.badField("checkpoint.timeout_seconds", "must be an integer between 1 and "
          + Checkpoint.MAX_TIMEOUT_SECONDS);
    }
    return new Checkpoint(named, seconds);
  }

  /** Decodes a task; {@code defaultTimeout} is the configured default_task_timeout. */
  public static TaskSpec decode(Buffer body, int defaultTimeout) {
    StrictJson json = StrictJson.parse(body, FIELDS);
    if (json.has("group_id")) {
      json.string("group_id", null, 128, null); // its type is checked first, as for every field
      throw ApiError.badField("group_id", "a task joins a group only when the group is created (POST /api/v1/groups"
          + " with the task among its members)");
    }
    return decode(json, defaultTimeout);
  }

  /** Decodes one member of a group: a task spec as an object (no group_id: the group sets it). */
  static TaskSpec decodeMember(JsonObject member, int defaultTimeout) {
    return decode(StrictJson.of(member, field -> FIELDS.contains(field) && !field.equals("group_id")
        && !field.equals("queue")), defaultTimeout);
  }

  private static TaskSpec decode(StrictJson json, int defaultTimeout) {
    String name = json.requiredString("name", 128, NAME);
    String type = json.string("type", "job", 16, null);
    if (!TYPES.contains(type)) {
      throw ApiError.badField("type", "must be one of job, training, inference (was '" + type + "')");
    }
    String image = json.string("image", null, 512, null);
    if (image != null && image.isBlank()) {
      throw ApiError.badField("image", "must not be blank");
    }
    List<String> command = json.stringList("command", 256, 65536, false);
    if (command.isEmpty() && image == null) {
      throw ApiError.badField("command", "is required (a non-empty array) unless an image is given");
    }
    if (!command.isEmpty() && command.get(0).isBlank()) {
      throw ApiError.badField("command[0]", "must not be blank (it is the program to run)");
    }
    Map<String, String> env = json.stringMap("env", 256, ENV_KEY, 65536);
    for (String key : env.keySet()) {
      TaskEnvironment.whyReserved(key).ifPresent(why -> {
        throw ApiError.badField("env." + key, "is reserved: it " + why + " and cannot be given");
      });
    }
    int priority = (int) json.integer("priority", TaskSpec.DEFAULT_PRIORITY, 0, 100);
    boolean preemptible = json.bool("preemptible", false);
    if (preemptible && "training".equals(type)) {
      throw ApiError.badField("preemptible", "training tasks can never be preemptible");
    }
    int gpuRequired = (int) json.integer("gpu_required", 0, 0, MAX_GPUS);
    long gpuMemoryMb = json.integer("gpu_memory_mb", 0, 0, MAX_GPU_MEMORY_MB);
    String gpuType = json.string("gpu_type", null, 32, null);
    if (gpuType != null) {
      gpuType = GpuVendor.fromId(gpuType).map(GpuVendor::id).orElseThrow(() -> ApiError.badField("gpu_type",
          "must be one of musa, hygon, cambricon, biren, ascend, kunlun, iluvatar, nvidia, metax, enflame"));
    }
    List<String> gpuModels = json.stringList("gpu_model", 64, 128, false);
    double cpuCores = json.number("cpu_cores", 0, 0, 4096);
    long memoryMb = json.integer("memory_mb", 0, 0, 64L << 20);
    int timeoutSeconds = (int) json.integer("timeout_seconds", defaultTimeout, 1, 30L * 24 * 3600);
    Integer expectedRuntime = json.has("expected_runtime_seconds")
        ? (int) json.integer("expected_runtime_seconds", 0, 1, timeoutSeconds) : null;
    int grace = (int) json.integer("termination_grace_seconds", TaskSpec.DEFAULT_TERMINATION_GRACE_SECONDS, 0,
        TaskSpec.MAX_TERMINATION_GRACE_SECONDS);
    Map<String, String> nodeSelector = json.stringMap("node_selector", 64, LABEL_KEY, 256);
    Map<String, String> labels = json.stringMap("labels", 64, LABEL_KEY, 256);
    return new TaskSpec(name, type, image, command, env, priority, preemptible, gpuRequired, gpuMemoryMb, gpuType,
        gpuModels, cpuCores, memoryMb, timeoutSeconds, grace, checkpoint(json), nodeSelector, labels,
        json.string("queue", null, 63, QueueSpecDecoder.NAME), expectedRuntime);
  }
}
