package io.heteroflow.agent;

import io.heteroflow.agent.executor.ExitReport;
import io.heteroflow.agent.executor.ProcessExecutor;
import io.heteroflow.agent.executor.RunSpec;
import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.DetectionChain;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.LocalHostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.agent.gpu.topology.NvidiaTopology;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The real-GPU check (scripts/gpu-check/): on a GPU host, runs the agent's own detection chain and topology
 * reading against the real vendor tools, keeps every raw tool answer as a future test fixture, then runs a
 * real task through the agent's process executor with the visibility variable the agent injects.
 * Usage: {@code java -cp 'lib/*' io.heteroflow.agent.GpuCheck OUT_DIR [command…]}.
 */
public final class GpuCheck {
  private GpuCheck() {}

  public static void main(String[] args) throws Exception {
    Path out = Files.createDirectories(Path.of(args.length > 0 ? args[0] : "gpu-check-out"));
    List<String> task = args.length > 1 ? List.of(args).subList(1, args.length) : List.of("python3", "-c",
        "import os, torch; print('CUDA_VISIBLE_DEVICES=' + os.environ.get('CUDA_VISIBLE_DEVICES', ''));"
            + " print('device_count=%d' % torch.cuda.device_count());"
            + " print('device_name=' + torch.cuda.get_device_name(0))");
    RecordingProbe host = new RecordingProbe(new LocalHostProbe(), out);
    DetectionChain.Detection detection = DetectionChain.standard().detect(host);
    JsonObject report = new JsonObject()
        .put("vendor", detection.vendor() == null ? null : detection.vendor().id())
        .put("cards", new JsonArray(detection.cards().stream().map(GpuCheck::json).toList()))
        .put("errors", new JsonArray(detection.errors()));
    if (detection.vendor() != null && detection.vendor().id().equals("nvidia")) {
      try {
        report.put("topology_label", NvidiaTopology.detect(host, detection.cards().size()).orElse(null));
      } catch (ToolOutputException e) {
        report.put("topology_error", e.getMessage());
      }
    }
    if (!detection.cards().isEmpty()) {
      report.put("task", runTask(detection, task, out));
    }
    Files.writeString(out.resolve("report.json"), report.encodePrettily());
    System.out.println(report.encodePrettily());
  }

  private static JsonObject runTask(DetectionChain.Detection detection, List<String> command, Path out)
      throws Exception {
    List<Integer> cards = detection.cards().stream().map(DetectedCard::index).toList();
    String visible = cards.stream().map(String::valueOf).collect(Collectors.joining(","));
    Vertx vertx = Vertx.vertx();
    ProcessExecutor executor = new ProcessExecutor(vertx, out.resolve("task-logs"), 2, Duration.ofSeconds(10));
    try {
      RunSpec spec = new RunSpec("gpu-check", null, command,
          Map.of(detection.vendor().visibilityVariable(), visible), 300, detection.vendor(), cards);
      ExitReport exit = executor.start(spec).await(6, TimeUnit.MINUTES);
      return new JsonObject().put("command", new JsonArray(command))
          .put("injected", detection.vendor().visibilityVariable() + "=" + visible)
          .put("outcome", exit.outcome().wire()).put("exit_code", exit.exitCode()).put("output", exit.logTail());
    } finally {
      executor.close();
      vertx.close();
    }
  }

  private static JsonObject json(DetectedCard card) {
    return new JsonObject().put("index", card.index()).put("uuid", card.uuid()).put("model", card.model())
        .put("memory_total_mb", card.memoryTotalMb()).put("memory_used_mb", card.memoryUsedMb())
        .put("utilization_percent", card.utilizationPercent()).put("temperature_c", card.temperatureC())
        .put("numa_node", card.numaNode());
  }

  /** Passes every call to the real host and keeps each tool's raw answer in the output folder. */
  private static final class RecordingProbe implements HostProbe {
    private final HostProbe host;
    private final Path out;

    RecordingProbe(HostProbe host, Path out) {
      this.host = host;
      this.out = out;
    }

    @Override
    public Optional<String> run(String... command) throws ToolOutputException {
      Optional<String> answer = host.run(command);
      if (answer.isPresent()) {
        String name = String.join("_", command).replaceAll("[^A-Za-z0-9._=-]", "_");
        try {
          Files.writeString(out.resolve(name.substring(0, Math.min(120, name.length())) + ".txt"), answer.get());
        } catch (IOException e) {
          System.err.println("cannot keep the output of " + String.join(" ", command) + ": " + e.getMessage());
        }
      }
      return answer;
    }

    @Override
    public Optional<String> readFile(String path) {
      return host.readFile(path);
    }

    @Override
    public List<String> list(String directory) {
      return host.list(directory);
    }
  }
}
