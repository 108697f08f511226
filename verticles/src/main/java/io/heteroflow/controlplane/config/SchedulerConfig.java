package io.heteroflow.controlplane.config;

import io.heteroflow.controlplane.scheduler.framework.LoadThresholds;
import io.heteroflow.controlplane.scheduler.framework.PluginConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The scheduler's configuration (SPEC §12), read from conf/config.yaml. Unknown keys are refused by name,
 * so a misspelt setting never silently keeps its default.
 */
public record SchedulerConfig(int defaultTaskTimeout, long gpuReserveFixedMb, int gpuReservePercent,
                              int portRangeStart, int portRangeEnd, int maxInferencePerNode,
                              LoadThresholds loadThresholds, Map<String, PluginConfig> pluginDefaults,
                              int masterPortRangeStart, int masterPortRangeEnd, QueueingConfig queueing,
                              ApiConfig api) {

  public static final String RESOURCE = "conf/config.yaml";
  private static final Set<String> TOP = Set.of("scheduler", "plugins", "queueing", "api");
  private static final Set<String> QUEUEING = Set.of("reserve_after_seconds", "borrow_idle_seconds",
      "training_borrow_percent");
  private static final Set<String> SCHEDULER = Set.of("default_task_timeout", "gpu_reserve_fixed_mb",
      "gpu_reserve_percent", "port_range_start", "port_range_end", "max_inference_per_node", "load_thresholds",
      "master_port_range_start", "master_port_range_end");
  private static final Set<String> THRESHOLDS = Set.of("gpu_memory_percent", "gpu_utilization_percent",
      "cpu_percent", "memory_percent", "gpu_temperature_threshold");
  private static final Set<String> PLUGIN = Set.of("enabled", "weight", "extra");

  /** The master port range a configuration without one gets (torch.distributed's customary 29500 first). */
  public static final int MASTER_PORT_RANGE_START = 29500;
  public static final int MASTER_PORT_RANGE_END = 29999;

  /** The default master port range (29500-29999): for configurations built in code. */
  public SchedulerConfig(int defaultTaskTimeout, long gpuReserveFixedMb, int gpuReservePercent, int portRangeStart,
                         int portRangeEnd, int maxInferencePerNode, LoadThresholds loadThresholds,
                         Map<String, PluginConfig> pluginDefaults) {
    this(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd, maxInferencePerNode,
        loadThresholds, pluginDefaults, MASTER_PORT_RANGE_START, MASTER_PORT_RANGE_END);
  }

  /** The default queueing settings. */
  public SchedulerConfig(int defaultTaskTimeout, long gpuReserveFixedMb, int gpuReservePercent, int portRangeStart,
                         int portRangeEnd, int maxInferencePerNode, LoadThresholds loadThresholds,
                         Map<String, PluginConfig> pluginDefaults, int masterPortRangeStart, int masterPortRangeEnd) {
    this(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd, maxInferencePerNode,
        loadThresholds, pluginDefaults, masterPortRangeStart, masterPortRangeEnd, QueueingConfig.DEFAULTS);
  }

  /** The default API settings ({@link ApiConfig#DEFAULTS}). */
  public SchedulerConfig(int defaultTaskTimeout, long gpuReserveFixedMb, int gpuReservePercent, int portRangeStart,
                         int portRangeEnd, int maxInferencePerNode, LoadThresholds loadThresholds,
                         Map<String, PluginConfig> pluginDefaults, int masterPortRangeStart, int masterPortRangeEnd,
                         QueueingConfig queueing) {
    this(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd, maxInferencePerNode,
        loadThresholds, pluginDefaults, masterPortRangeStart, masterPortRangeEnd, queueing, ApiConfig.DEFAULTS);
  }

  /** This configuration with other API settings (rate limits). */
  public SchedulerConfig withApi(ApiConfig other) {
    return new SchedulerConfig(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd,
        maxInferencePerNode, loadThresholds, pluginDefaults, masterPortRangeStart, masterPortRangeEnd, queueing, other);
  }

  /** This configuration with another master port range (not validated: for tests of exhaustion). */
  public SchedulerConfig withMasterPortRange(int start, int end) {
    return new SchedulerConfig(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd,
        maxInferencePerNode, loadThresholds, pluginDefaults, start, end, queueing, api);
  }

  /** This configuration with other queueing settings. */
  public SchedulerConfig withQueueing(QueueingConfig other) {
    return new SchedulerConfig(defaultTaskTimeout, gpuReserveFixedMb, gpuReservePercent, portRangeStart, portRangeEnd,
        maxInferencePerNode, loadThresholds, pluginDefaults, masterPortRangeStart, masterPortRangeEnd, other, api);
  }

  /** Memory of a card never handed to shards: the larger of the fixed and the percentage reserve. */
  public long reserveMb(long cardMemoryMb) {
    return Math.max(gpuReserveFixedMb, cardMemoryMb * gpuReservePercent / 100);
  }

  /** The packaged defaults (the conf/config.yaml on the classpath). */
  public static SchedulerConfig defaults() {
    try (InputStream in = SchedulerConfig.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing " + RESOURCE + " on the classpath");
      }
      return parse(new Yaml(new SafeConstructor(new LoaderOptions())).load(in), RESOURCE);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static SchedulerConfig load(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return parse(new Yaml(new SafeConstructor(new LoaderOptions())).load(in), file.toString());
    }
  }

  @SuppressWarnings("unchecked")
  static SchedulerConfig parse(Object document, String source) {
    Map<String, Object> root = map(document, source, TOP);
    Map<String, Object> scheduler = map(root.get("scheduler"), source + ": scheduler", SCHEDULER);
    Map<String, Object> thresholds = map(scheduler.get("load_thresholds"), source + ": scheduler.load_thresholds",
        THRESHOLDS);
    LoadThresholds limits = new LoadThresholds(
        number(thresholds, "cpu_percent", 90, source), number(thresholds, "memory_percent", 90, source),
        number(thresholds, "gpu_memory_percent", 95, source), number(thresholds, "gpu_utilization_percent", 95, source),
        (int) number(thresholds, "gpu_temperature_threshold", 79, source));
    Map<String, PluginConfig> plugins = new LinkedHashMap<>();
    Map<String, Object> pluginSection = root.get("plugins") == null ? Map.of() : (Map<String, Object>) root.get("plugins");
    pluginSection.forEach((name, value) -> {
      Map<String, Object> plugin = map(value, source + ": plugins." + name, PLUGIN);
      Object extra = plugin.getOrDefault("extra", Map.of());
      plugins.put(name, new PluginConfig(name, Boolean.TRUE.equals(plugin.getOrDefault("enabled", true)),
          (int) number(plugin, "weight", 1, source), (Map<String, Object>) extra));
    });
    SchedulerConfig config = new SchedulerConfig((int) number(scheduler, "default_task_timeout", 7200, source),
        (long) number(scheduler, "gpu_reserve_fixed_mb", 500, source),
        (int) number(scheduler, "gpu_reserve_percent", 10, source),
        (int) number(scheduler, "port_range_start", 8000, source), (int) number(scheduler, "port_range_end", 8999, source),
        (int) number(scheduler, "max_inference_per_node", 64, source), limits, plugins,
        (int) number(scheduler, "master_port_range_start", MASTER_PORT_RANGE_START, source),
        (int) number(scheduler, "master_port_range_end", MASTER_PORT_RANGE_END, source),
        queueing(map(root.get("queueing"), source + ": queueing", QUEUEING), source),
        ApiConfig.parse(root.get("api"), source));
    if (config.portRangeStart() < 1 || config.portRangeEnd() > 65535 || config.portRangeStart() > config.portRangeEnd()) {
      throw new IllegalArgumentException(source + ": port_range_start..port_range_end must be a range within 1-65535");
    }
    if (config.masterPortRangeStart() < 1 || config.masterPortRangeEnd() > 65535
        || config.masterPortRangeStart() > config.masterPortRangeEnd()) {
      throw new IllegalArgumentException(source
          + ": master_port_range_start..master_port_range_end must be a range within 1-65535");
    }
    if (config.masterPortRangeStart() <= config.portRangeEnd() && config.portRangeStart() <= config.masterPortRangeEnd()) {
      throw new IllegalArgumentException(source + ": master_port_range_start..master_port_range_end must not overlap"
          + " port_range_start..port_range_end (a node's host ports and master ports are handed out separately)");
    }
    return config;
  }

  private static QueueingConfig queueing(Map<String, Object> section, String source) {
    QueueingConfig defaults = QueueingConfig.DEFAULTS;
    try {
      return new QueueingConfig(
          (int) number(section, "reserve_after_seconds", defaults.reserveAfterSeconds(), source),
          (int) number(section, "borrow_idle_seconds", defaults.borrowIdleSeconds(), source),
          (int) number(section, "training_borrow_percent", defaults.trainingBorrowPercent(), source));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(source + ": " + e.getMessage(), e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value, String where, Set<String> known) {
    if (value == null) {
      return Map.of();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException(where + ": expected a mapping");
    }
    for (Object key : map.keySet()) {
      if (!known.contains(String.valueOf(key)) && !where.endsWith(": plugins")) {
        throw new IllegalArgumentException(where + ": unknown key '" + key + "'");
      }
    }
    return (Map<String, Object>) map;
  }

  private static double number(Map<String, Object> map, String key, double fallback, String source) {
    Object value = map.get(key);
    if (value == null) {
      return fallback;
    }
    if (!(value instanceof Number number)) {
      throw new IllegalArgumentException(source + ": " + key + " must be a number");
    }
    return number.doubleValue();
  }
}
