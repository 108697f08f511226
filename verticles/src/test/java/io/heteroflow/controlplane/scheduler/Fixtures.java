package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Fluent builders for scheduler fixtures: nodes with cards, and tasks. */
final class Fixtures {
  private Fixtures() {}

  static NodeBuilder node(String id) {
    return new NodeBuilder(id);
  }

  static TaskBuilder task() {
    return new TaskBuilder();
  }

  static final class NodeBuilder {
    private final String id;
    private String vendor = "nvidia";
    private String status = "online";
    private String dedicated;
    private int cards = 8;
    private String model = "A100";
    private double cpuPercent = 10;
    private final Map<Integer, Integer> busy = new HashMap<>();
    private final Map<Integer, Long> memoryUsed = new HashMap<>();
    private final Map<String, String> labels = new HashMap<>();

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

    NodeBuilder busyCards(int... indices) {
      for (int index : indices) {
        busy.put(index, 1);
      }
      return this;
    }

    NodeBuilder cardMemoryUsedPercent(int index, int percent) {
      memoryUsed.put(index, 80_000L * percent / 100);
      return this;
    }

    NodeBuilder cpu(double percent) {
      cpuPercent = percent;
      return this;
    }

    NodeBuilder label(String key, String value) {
      labels.put(key, value);
      return this;
    }

    NodeInfo build() {
      List<CardInfo> list = new ArrayList<>();
      for (int i = 0; i < cards; i++) {
        list.add(new CardInfo(i, model, 80_000, memoryUsed.getOrDefault(i, 0L), 0, 40, i < cards / 2 ? 0 : 1));
      }
      return new NodeInfo(id, vendor, status, true, dedicated, null, null, null, labels, null, 64, cpuPercent, 512,
          50_000, cards, busy.size(), list, busy);
    }
  }

  static final class TaskBuilder {
    private String tenant = "team-a";
    private int gpus = 1;
    private String gpuType;
    private List<String> models = List.of();
    private final Map<String, String> selector = new HashMap<>();

    TaskBuilder tenant(String value) {
      tenant = value;
      return this;
    }

    TaskBuilder gpus(int count) {
      gpus = count;
      return this;
    }

    TaskBuilder gpuType(String value) {
      gpuType = value;
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

    TaskRequest build() {
      return new TaskRequest(UUID.randomUUID(), tenant, "job", 50, gpus, 0, gpuType, models, selector, Map.of());
    }
  }
}
