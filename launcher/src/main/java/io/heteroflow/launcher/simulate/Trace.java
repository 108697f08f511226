package io.heteroflow.launcher.simulate;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.TaskRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * An Alibaba openb trace (../shared/traces/alibaba-gpu-v2023): GPU nodes and pods, read strictly — a malformed
 * file is refused with its line and column. A card's memory stands for its 1000 milli-GPU of compute share, so
 * a pod's {@code gpu_milli} below 1000 becomes a fractional shard and whole GPUs become whole-card tasks.
 */
public record Trace(String name, List<NodeInfo> nodes, List<Pod> pods) {
  public static final long CARD_UNITS = 1000;

  /** One pod of the trace: the task the scheduler sees, and its GPU demand in milli-GPU. */
  public record Pod(TaskRequest task, long gpuMilli) {
  }

  public long gpuCapacityMilli() {
    return nodes.stream().mapToLong(node -> node.gpuTotal() * CARD_UNITS).sum();
  }

  public static Trace read(Path nodesCsv, Path podsCsv) throws IOException {
    String name = podsCsv.getFileName().toString().replaceFirst("^openb_pod_list_", "").replaceFirst("\\.csv$", "");
    return new Trace(name, readNodes(nodesCsv), readPods(podsCsv));
  }

  static List<NodeInfo> readNodes(Path file) throws IOException {
    List<NodeInfo> nodes = new ArrayList<>();
    for (Row row : rows(file, List.of("sn", "cpu_milli", "memory_mib", "gpu", "model"))) {
      int gpus = (int) row.integer("gpu");
      List<CardInfo> cards = new ArrayList<>();
      for (int i = 0; i < gpus; i++) {
        cards.add(new CardInfo(i, row.text("model"), CARD_UNITS, 0, 0, 40, null));
      }
      nodes.add(new NodeInfo(row.text("sn"), "nvidia", "online", true, null, null, null, null, Map.of(), null,
          (int) (row.integer("cpu_milli") / 1000), 0, row.integer("memory_mib") / 1024.0, 0, gpus, 0, 0, 0, 0, cards,
          Map.of()));
    }
    return nodes;
  }

  static List<Pod> readPods(Path file) throws IOException {
    List<Pod> pods = new ArrayList<>();
    for (Row row : rows(file, List.of("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"))) {
      long gpus = row.integer("num_gpu");
      long milli = row.integer("gpu_milli");
      if (milli > CARD_UNITS || (gpus > 1 && milli < CARD_UNITS) || (gpus == 0 && milli > 0)) {
        throw row.error("gpu_milli", "gpu_milli " + milli + " with num_gpu " + gpus + " is not a shape this simulator knows");
      }
      boolean shard = gpus == 1 && milli < CARD_UNITS;
      String spec = row.optional("gpu_spec");
      List<String> models = spec == null || spec.isBlank() ? List.of() : Arrays.asList(spec.split("\\|"));
      TaskRequest task = new TaskRequest(UUID.randomUUID(), "trace", "job", 50, shard ? 0 : (int) gpus,
          shard ? milli : 0, null, models, row.integer("cpu_milli") / 1000.0, row.integer("memory_mib"), Map.of(),
          Map.of());
      pods.add(new Pod(task, gpus * milli));
    }
    return pods;
  }

  /** One data row, with the header to name columns in errors. */
  private record Row(Path file, int line, List<String> header, String[] cells) {
    String text(String column) {
      String value = optional(column);
      if (value == null || value.isBlank()) {
        throw error(column, "is empty");
      }
      return value;
    }

    String optional(String column) {
      int index = header.indexOf(column);
      return index < 0 || index >= cells.length ? null : cells[index].trim();
    }

    long integer(String column) {
      String value = text(column);
      try {
        long number = Long.parseLong(value);
        if (number < 0) {
          throw error(column, "must not be negative (was " + value + ")");
        }
        return number;
      } catch (NumberFormatException e) {
        throw error(column, "must be an integer (was '" + value + "')");
      }
    }

    IllegalArgumentException error(String column, String message) {
      return new IllegalArgumentException(file + " line " + line + ", column " + column + ": " + message);
    }
  }

  private static List<Row> rows(Path file, List<String> required) throws IOException {
    List<String> lines = Files.readAllLines(file);
    if (lines.isEmpty()) {
      throw new IllegalArgumentException(file + " line 1: empty file, expected a header with " + required);
    }
    List<String> header = Arrays.stream(lines.get(0).split(",", -1)).map(String::trim).toList();
    for (String column : required) {
      if (!header.contains(column)) {
        throw new IllegalArgumentException(file + " line 1, column " + column + ": missing from the header " + header);
      }
    }
    List<Row> rows = new ArrayList<>();
    for (int i = 1; i < lines.size(); i++) {
      if (lines.get(i).isBlank()) {
        continue;
      }
      String[] cells = lines.get(i).split(",", -1);
      if (cells.length < required.size()) {
        throw new IllegalArgumentException(file + " line " + (i + 1) + ": " + cells.length + " columns, expected at least "
            + required.size());
      }
      rows.add(new Row(file, i + 1, header, cells));
    }
    return rows;
  }
}
