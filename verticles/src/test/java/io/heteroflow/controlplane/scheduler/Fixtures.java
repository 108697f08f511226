package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.config.SchedulerConfig;
import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.CardUse;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import io.heteroflow.controlplane.scheduler.framework.TenantBoundary;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** Fluent builders for scheduler fixtures: nodes with cards, NVLink domains and occupants; tasks; tenants. */
final class Fixtures {
  static final SchedulerConfig CONFIG = SchedulerConfig.defaults();

  private Fixtures() {}

  static NodeBuilder node(String id) {
    return new NodeBuilder(id);
  }

  static TaskBuilder task() {
    return new TaskBuilder();
  }

  /** Share groups as "group:tenant,tenant" strings. */
  static TenantBoundary groups(String... groups) {
    List<Map.Entry<String, String>> pairs = new ArrayList<>();
    for (String group : groups) {
      String[] nameAndTenants = group.split(":");
      for (String tenant : nameAndTenants[1].split(",")) {
        pairs.add(Map.entry(nameAndTenants[0], tenant));
      }
    }
    return TenantBoundary.ofMemberships(pairs);
  }

  static final class NodeBuilder {
    private final String id;
    private String vendor = "nvidia";
    private String status = "online";
    private String dedicated;
    private int cards = 8;
    private String model = "A100";
    private long cardMemoryMb = 81920;
    private double cpuPercent = 10;
    private int cpuCores = 64;
    private double cpuAllocated;
    private String topology;
    private String region;
    private String zone;
    private String rack;
    private final Map<Integer, CardUse> use = new HashMap<>();
    private final Map<Integer, Long> memoryUsed = new HashMap<>();
    private final Map<String, String> labels = new HashMap<>();
    private long memoryUsedMb = 50_000;
    private final Map<Integer, Integer> utilization = new HashMap<>();
    private final Map<Integer, Integer> temperature = new HashMap<>();
    private final Map<String, Integer> replicas = new HashMap<>();

    NodeBuilder(String id) {
      this.id = id;
    }

    NodeBuilder vendor(String value) {
      vendor = value;
      return this;
    }

    NodeBuilder offline() {
      status = "offline";
      return this;
    }

    NodeBuilder dedicatedTo(String tenant) {
      dedicated = tenant;
      return this;
    }

    NodeBuilder cards(int count, String cardModel) {
      cards = count;
      model = cardModel;
      return this;
    }

    NodeBuilder cardMemory(long mb) {
      cardMemoryMb = mb;
      return this;
    }

    /** Whole-card tasks of tenant "someone" on these cards. */
    NodeBuilder busyCards(int... indices) {
      for (int index : indices) {
        use.put(index, new CardUse(1, 0, 0, Set.of("someone")));
      }
      return this;
    }

    /** A shard of {@code memoryMb} of {@code tenant} on card {@code index} (added to any already there). */
    NodeBuilder shard(int index, String tenant, long memoryMb) {
      CardUse before = use.getOrDefault(index, CardUse.NONE);
      Set<String> tenants = new HashSet<>(before.tenants());
      tenants.add(tenant);
      use.put(index, new CardUse(0, before.shards() + 1, before.shardMemoryMb() + memoryMb, tenants));
      return this;
    }

    NodeBuilder cardMemoryUsedPercent(int index, int percent) {
      memoryUsed.put(index, cardMemoryMb * percent / 100);
      return this;
    }

    NodeBuilder cpu(double percent) {
      cpuPercent = percent;
      return this;
    }

    /** Host memory in use (of 512 GB). */
    NodeBuilder memoryUsedMb(long mb) {
      memoryUsedMb = mb;
      return this;
    }

    NodeBuilder cardUtilization(int index, int percent) {
      utilization.put(index, percent);
      return this;
    }

    NodeBuilder cardTemperature(int index, int celsius) {
      temperature.put(index, celsius);
      return this;
    }

    NodeBuilder cpuCores(int cores, double allocated) {
      cpuCores = cores;
      cpuAllocated = allocated;
      return this;
    }

    NodeBuilder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    /** The heteroflow.io/gpu-topology label, e.g. "nvlink=0-1,2-3;numa=0,0,1,1". */
    NodeBuilder topology(String label) {
      topology = label;
      return this;
    }

    /** {@code count} active replicas of inference service {@code service} run here (holding no cards). */
    NodeBuilder replicas(String service, int count) {
      replicas.put(service, count);
      return this;
    }

    NodeBuilder location(String regionValue, String zoneValue, String rackValue) {
      region = regionValue;
      zone = zoneValue;
      rack = rackValue;
      return this;
    }

    NodeInfo build() {
      List<CardInfo> list = new ArrayList<>();
      for (int i = 0; i < cards; i++) {
        list.add(new CardInfo(i, model, cardMemoryMb, memoryUsed.getOrDefault(i, 0L), utilization.getOrDefault(i, 0),
            temperature.getOrDefault(i, 40), null));
      }
      int used = (int) use.values().stream().filter(card -> card.wholeTasks() > 0).count();
      return new NodeInfo(id, vendor, status, true, dedicated, region, zone, rack, labels, topology, cpuCores,
          cpuPercent, 512, memoryUsedMb, cards, used, cpuAllocated, 0, 0, list, use, false, replicas);
    }
  }

  static final class TaskBuilder {
    private String tenant = "team-a";
    private String type = "job";
    private int priority = 50;
    private java.time.Instant queuedSince;
    private int gpus = 1;
    private long gpuMemoryMb;
    private String gpuType;
    private double cpuCores;
    private List<String> models = List.of();
    private final Map<String, String> selector = new HashMap<>();
    private final Map<String, String> labels = new HashMap<>();

    TaskBuilder tenant(String value) {
      tenant = value;
      return this;
    }

    TaskBuilder type(String value) {
      type = value;
      return this;
    }

    TaskBuilder priority(int value) {
      priority = value;
      return this;
    }

    TaskBuilder queuedSince(java.time.Instant value) {
      queuedSince = value;
      return this;
    }

    TaskBuilder gpus(int count) {
      gpus = count;
      return this;
    }

    /** A fractional task: memory only, no whole cards. */
    TaskBuilder shard(long memoryMb) {
      gpus = 0;
      gpuMemoryMb = memoryMb;
      return this;
    }

    TaskBuilder gpuType(String value) {
      gpuType = value;
      return this;
    }

    TaskBuilder cpuCores(double value) {
      cpuCores = value;
      return this;
    }

    TaskBuilder models(String... values) {
      models = List.of(values);
      return this;
    }

    TaskBuilder selector(String key, String value) {
      selector.put(key, value);
      return this;
    }

    /** A replica of inference service {@code service}: type inference with the service label. */
    TaskBuilder replicaOf(String service) {
      type = "inference";
      labels.put(TaskRequest.SERVICE_LABEL, service);
      return this;
    }

    TaskBuilder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    TaskRequest build() {
      return new TaskRequest(UUID.randomUUID(), tenant, type, priority, gpus, gpuMemoryMb, gpuType, models, cpuCores, 0,
          selector, labels, queuedSince);
    }
  }
}
