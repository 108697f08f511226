package io.heteroflow.agent.simulated;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The per-card GPU utilisation a simulated node reports, read from a small file that tests and demos rewrite while
 * the node runs (the autoscaler reads card utilisation from heartbeats). The file holds JSON or a single number:
 * <ul>
 *   <li>{@code {"0": 85, "1": 40}}: card index to percent; cards not named report 0;</li>
 *   <li>{@code {"all": 70}}: every card (card indices given next to {@code all} win over it);</li>
 *   <li>{@code 70}: every card.</li>
 * </ul>
 * Values are clamped to 0..100 and rounded. A missing file means 0 on every card; a malformed file (not JSON, a
 * value that is not a number, a key that is neither {@code all} nor a card index) also means 0 on every card and
 * is logged once per file at FINE. Reading never throws. It blocks on the file: the agent reads its node source on
 * a worker thread.
 */
public final class UtilizationFile {
  private static final Logger LOG = Logger.getLogger(UtilizationFile.class.getName());
  /** Files already reported as malformed, so a file left broken logs once, not every heartbeat. */
  private static final Set<Path> REPORTED = ConcurrentHashMap.newKeySet();

  private UtilizationFile() {}

  /** Each card's utilisation percent ({@code cards} entries), from {@code file}; all 0 when it is null or absent. */
  public static int[] read(Path file, int cards) {
    int[] percent = new int[Math.max(0, cards)];
    if (file == null) {
      return percent;
    }
    String text;
    try {
      text = Files.readString(file);
    } catch (NoSuchFileException e) {
      return percent;
    } catch (IOException | RuntimeException e) {
      reportOnce(file, "cannot be read: " + e);
      return percent;
    }
    try {
      return parse(text, percent.length);
    } catch (RuntimeException e) {
      reportOnce(file, "is malformed (" + e.getMessage() + "); reporting 0 on every card");
      return percent;
    }
  }

  /** Parses the file's text; an IllegalArgumentException or DecodeException when it is malformed. */
  static int[] parse(String text, int cards) {
    int[] percent = new int[cards];
    Object value;
    try {
      value = Json.decodeValue(text.strip());
    } catch (DecodeException e) {
      throw new IllegalArgumentException("not JSON or a number");
    }
    if (value instanceof Number number) {
      Arrays.fill(percent, clamp(number));
      return percent;
    }
    if (!(value instanceof JsonObject object)) {
      throw new IllegalArgumentException("expected a number or an object");
    }
    Object all = object.getValue("all");
    if (all != null) {
      Arrays.fill(percent, clamp(numberOf("all", all)));
    }
    for (Map.Entry<String, Object> entry : object) {
      if (entry.getKey().equals("all")) {
        continue;
      }
      int index;
      try {
        index = Integer.parseInt(entry.getKey().strip());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("key '" + entry.getKey() + "' is neither 'all' nor a card index");
      }
      int cardPercent = clamp(numberOf(entry.getKey(), entry.getValue()));
      if (index >= 0 && index < cards) {
        percent[index] = cardPercent;
      }
    }
    return percent;
  }

  private static Number numberOf(String key, Object value) {
    if (!(value instanceof Number number)) {
      throw new IllegalArgumentException("'" + key + "' is not a number");
    }
    return number;
  }

  private static int clamp(Number number) {
    double value = number.doubleValue();
    if (Double.isNaN(value)) {
      return 0;
    }
    return (int) Math.round(Math.max(0, Math.min(100, value)));
  }

  private static void reportOnce(Path file, String problem) {
    if (REPORTED.add(file.toAbsolutePath())) {
      LOG.log(Level.FINE, "utilization file {0} {1}", new Object[] {file, problem});
    }
  }
}
