package io.heteroflow.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * {@code --jfr DIR}: a Flight Recorder recording ("profile" settings: Java samples every 10-20 ms) of one
 * scenario's drain, kept as DIR/SCENARIO.jfr, and summarised: the hottest methods by self samples, the
 * HeteroFlow methods by inclusive samples, and the share of samples in a few areas (scheduling pipeline,
 * snapshot building, PostgreSQL client, Netty, JSON, metrics).
 */
final class JfrProfile implements AutoCloseable {
  /** Areas by the first matching frame from the top of the stack; order matters (most specific first). */
  private static final Map<String, List<String>> AREAS = new LinkedHashMap<>();

  static {
    AREAS.put("scheduling pipeline (decide: filters, scores, card pick)",
        List.of("io.heteroflow.controlplane.scheduler.framework.", "io.heteroflow.controlplane.scheduler.plugins.",
            "io.heteroflow.controlplane.scheduler.builtin."));
    AREAS.put("snapshot / row mapping (NodeStore, TaskRecord)",
        List.of("io.heteroflow.controlplane.store.NodeStore", "io.heteroflow.controlplane.store.TaskRecord",
            "io.heteroflow.controlplane.store.TaskStore"));
    AREAS.put("bind transaction code (BindStore, BindVerticle)",
        List.of("io.heteroflow.controlplane.store.BindStore", "io.heteroflow.controlplane.scheduler.BindVerticle"));
    AREAS.put("PostgreSQL client (vertx-pg-client, sqlclient)", List.of("io.vertx.pgclient.", "io.vertx.sqlclient."));
    AREAS.put("JSON (Jackson, Vert.x JSON)", List.of("com.fasterxml.jackson.", "io.vertx.core.json."));
    AREAS.put("metrics (Micrometer, Prometheus)", List.of("io.micrometer.", "io.prometheus."));
    AREAS.put("event bus", List.of("io.vertx.core.eventbus.", "io.vertx.core.impl.EventBus"));
    AREAS.put("Netty I/O", List.of("io.netty."));
    AREAS.put("benchmark itself (heartbeats, polling)", List.of("io.heteroflow.bench."));
  }

  private final Recording recording;
  private final Path file;

  private JfrProfile(Recording recording, Path file) {
    this.recording = recording;
    this.file = file;
  }

  static JfrProfile start(Path directory, String scenario) throws IOException, ParseException {
    Files.createDirectories(directory);
    Recording recording = new Recording(Configuration.getConfiguration("profile"));
    recording.setName("heteroflow-bench-" + scenario);
    recording.start();
    return new JfrProfile(recording, directory.resolve(scenario + ".jfr").toAbsolutePath());
  }

  /** Stops, writes the file, and answers the summary. */
  JsonObject stopAndSummarise() throws IOException {
    recording.stop();
    recording.dump(file);
    recording.close();
    Map<String, Integer> self = new HashMap<>();
    Map<String, Integer> inclusive = new HashMap<>();
    Map<String, Integer> areas = new LinkedHashMap<>();
    Map<String, Integer> threads = new HashMap<>();
    int samples = 0;
    for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
      if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
        continue;
      }
      List<RecordedFrame> frames = event.getStackTrace().getFrames();
      if (frames.isEmpty()) {
        continue;
      }
      samples++;
      self.merge(name(frames.get(0)), 1, Integer::sum);
      Set<String> seen = new HashSet<>();
      String area = null;
      for (RecordedFrame frame : frames) {
        String method = name(frame);
        if (method.startsWith("io.heteroflow.") && seen.add(method)) {
          inclusive.merge(method, 1, Integer::sum);
        }
        if (area == null) {
          area = areaOf(method);
        }
      }
      areas.merge(area == null ? "other (JDK, Vert.x core, ...)" : area, 1, Integer::sum);
      Object thread = event.getValue("sampledThread");
      String threadName = thread instanceof jdk.jfr.consumer.RecordedThread recorded ? recorded.getJavaName() : "?";
      threads.merge(ProcessStats.group(threadName == null ? "?" : threadName), 1, Integer::sum);
    }
    return new JsonObject().put("file", file.toString()).put("execution_samples", samples)
        .put("areas_percent", percentages(areas, samples, 20))
        .put("threads_percent", percentages(threads, samples, 10))
        .put("top_self_percent", percentages(self, samples, 20))
        .put("heteroflow_inclusive_percent", percentages(inclusive, samples, 20));
  }

  private static String areaOf(String method) {
    for (Map.Entry<String, List<String>> area : AREAS.entrySet()) {
      for (String prefix : area.getValue()) {
        if (method.startsWith(prefix)) {
          return area.getKey();
        }
      }
    }
    return null;
  }

  private static String name(RecordedFrame frame) {
    return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
  }

  private static JsonArray percentages(Map<String, Integer> counts, int total, int limit) {
    JsonArray top = new JsonArray();
    counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(limit)
        .forEach(entry -> top.add(new JsonObject().put("name", entry.getKey())
            .put("percent", Math.round(1000.0 * entry.getValue() / Math.max(1, total)) / 10.0)));
    return top;
  }

  @Override
  public void close() {
    recording.close();
  }
}
