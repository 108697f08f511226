package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NVIDIA cards from one {@code nvidia-smi --query-gpu} call, read by the column order requested (no header).
 * Values the card does not report ({@code N/A}, {@code [N/A]}, {@code [Not Supported]}) become 0 or null; units
 * are tolerated when present. The NUMA node comes from the card's PCI device in sysfs.
 */
public final class NvidiaDetector extends ToolDetector {
  static final List<String> QUERY_FIELDS = List.of("index", "uuid", "name", "memory.total", "memory.used",
      "utilization.gpu", "temperature.gpu", "pci.bus_id");
  static final String[] COMMAND = {"nvidia-smi", "--query-gpu=" + String.join(",", QUERY_FIELDS),
      "--format=csv,noheader,nounits"};

  private static final int NAME_COLUMN = QUERY_FIELDS.indexOf("name");
  private static final Set<String> NOT_REPORTED = Set.of("n/a", "not supported");
  private static final Pattern READING = Pattern.compile("(\\d+)\\s*(?:MiB|%|C)?");
  private static final Pattern BUS_ID =
      Pattern.compile("([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");

  public NvidiaDetector() {
    super(GpuVendor.NVIDIA, "nvidia-smi", COMMAND);
  }

  /** The parser's messages say where ("line 2: …"); the operator also needs to know which tool. */
  @Override
  ToolOutputException unreadable(ToolOutputException thrown) {
    return namingTheTool(thrown);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    List<String> lines = output.lines().toList();
    List<DetectedCard> cards = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (!lines.get(i).isBlank()) {
        cards.add(card(columns(lines.get(i), QUERY_FIELDS.size(), NAME_COLUMN, i + 1), host, i + 1));
      }
    }
    return cards;
  }

  private static DetectedCard card(List<String> values, HostProbe host, int line) throws ToolOutputException {
    int index = requiredInt(values.get(0), "index", line);
    String name = values.get(2);
    if (name.isEmpty() || notReported(name)) {
      throw new ToolOutputException("line " + line + ": field name is empty");
    }
    String busId = values.get(7);
    return new DetectedCard(index, notReported(values.get(1)) ? null : values.get(1), name,
        reading(values.get(3), "memory.total", line).orElse(0),
        reading(values.get(4), "memory.used", line).orElse(0),
        intReading(values.get(5), "utilization.gpu", line),
        intReading(values.get(6), "temperature.gpu", line),
        notReported(busId) ? null : numaNode(host, busId, line));
  }

  /**
   * The comma-separated values of one CSV line, trimmed. A line with more commas than expected is taken to have
   * them inside the free-text column {@code textColumn} (a product name).
   */
  static List<String> columns(String line, int expected, int textColumn, int lineNumber)
      throws ToolOutputException {
    List<String> raw = new ArrayList<>(List.of(line.split(",", -1)));
    if (raw.size() < expected) {
      throw new ToolOutputException("line " + lineNumber + ": expected " + expected + " comma-separated fields, found "
          + raw.size() + " in '" + line.strip() + "'");
    }
    List<String> textParts = raw.subList(textColumn, textColumn + raw.size() - expected + 1);
    String text = String.join(",", textParts);
    textParts.clear();
    raw.add(textColumn, text);
    return raw.stream().map(String::strip).toList();
  }

  static boolean notReported(String value) {
    String bare = value.strip();
    if (bare.startsWith("[") && bare.endsWith("]")) {
      bare = bare.substring(1, bare.length() - 1).strip();
    }
    return NOT_REPORTED.contains(bare.toLowerCase(Locale.ROOT));
  }

  /** A whole-number reading with an optional unit (MiB, %, C); empty when the tool does not report it. */
  static OptionalLong reading(String value, String field, int line) throws ToolOutputException {
    if (notReported(value)) {
      return OptionalLong.empty();
    }
    Matcher number = READING.matcher(value.strip());
    if (!number.matches()) {
      throw new ToolOutputException("line " + line + ": field " + field + " is '" + value + "', not a number");
    }
    try {
      return OptionalLong.of(Long.parseLong(number.group(1)));
    } catch (NumberFormatException tooLarge) {
      throw new ToolOutputException("line " + line + ": field " + field + " is out of range: '" + value + "'");
    }
  }

  static int intReading(String value, String field, int line) throws ToolOutputException {
    long reading = reading(value, field, line).orElse(0);
    if (reading > Integer.MAX_VALUE) {
      throw new ToolOutputException("line " + line + ": field " + field + " is out of range: '" + value + "'");
    }
    return (int) reading;
  }

  static int requiredInt(String value, String field, int line) throws ToolOutputException {
    if (notReported(value)) {
      throw new ToolOutputException("line " + line + ": field " + field + " is not reported ('" + value + "')");
    }
    return intReading(value, field, line);
  }

  /**
   * The NUMA node of a PCI device given as {@code domain:bus:device.function} (nvidia-smi prints an 8-digit domain,
   * sysfs a 4-digit lower-case one); null when sysfs has no answer or says -1.
   */
  static Integer numaNode(HostProbe host, String busId, int line) throws ToolOutputException {
    Matcher parts = BUS_ID.matcher(busId.strip());
    if (!parts.matches()) {
      throw new ToolOutputException("line " + line + ": bus id '" + busId + "' is not domain:bus:device.function");
    }
    String device = String.format("%04x:%s:%s.%s", Long.parseLong(parts.group(1), 16),
        parts.group(2), parts.group(3), parts.group(4)).toLowerCase(Locale.ROOT);
    Optional<String> node = host.readFile("/sys/bus/pci/devices/" + device + "/numa_node");
    if (node.isEmpty()) {
      return null;
    }
    try {
      int value = Integer.parseInt(node.get().strip());
      return value < 0 ? null : value;
    } catch (NumberFormatException unreadable) {
      return null;
    }
  }
}
