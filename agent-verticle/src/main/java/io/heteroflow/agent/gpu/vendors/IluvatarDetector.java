package io.heteroflow.agent.gpu.vendors;

import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.columns;
import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.intReading;
import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.notReported;
import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.numaNode;
import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.reading;
import static io.heteroflow.agent.gpu.vendors.NvidiaDetector.requiredInt;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Iluvatar CoreX cards from {@code ixsmi}, whose output formats follow nvidia-smi's. The CSV query is asked first
 * (index, name, memory, utilization, temperature with a {@code C} suffix; no bus id, so no NUMA node). An ixsmi that
 * rejects it is asked for its plain table, read by splitting rows on {@code |} (never by column offsets, which
 * differ between versions): two rows per card under the {@code IX-ML:} header, then a {@code Processes:} section.
 * On dual-die boards one die's power reads {@code N/A / N/A}; power is not read.
 */
public final class IluvatarDetector extends ToolDetector {
  static final String[] CSV_COMMAND = {"ixsmi", "--format=csv,noheader",
      "--query-gpu=index,name,memory.total,memory.used,utilization.gpu,temperature.gpu"};
  static final String[] TABLE_COMMAND = {"ixsmi"};

  private static final int CSV_FIELDS = 6;
  private static final String TABLE_HEADER = "IX-ML:";
  private static final String PROCESSES_TITLE = "Processes:";

  public IluvatarDetector() {
    super(GpuVendor.ILUVATAR, "ixsmi", CSV_COMMAND);
  }

  /** The CSV query; an ixsmi that rejects it is asked for its table (and when it has none, the rejection stands). */
  @Override
  Optional<String> answer(HostProbe host) throws ToolOutputException {
    try {
      return host.run(CSV_COMMAND);
    } catch (ToolOutputException queryRejected) {
      return Optional.of(host.run(TABLE_COMMAND).orElseThrow(() -> queryRejected));
    }
  }

  /** The parser's messages say where ("line 2: …"); the operator also needs to know which tool. */
  @Override
  ToolOutputException unreadable(ToolOutputException thrown) {
    return namingTheTool(thrown);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    return output.contains(TABLE_HEADER) ? tableCards(output, host) : csvCards(output);
  }

  private static List<DetectedCard> csvCards(String output) throws ToolOutputException {
    List<String> lines = output.lines().toList();
    List<DetectedCard> cards = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).isBlank()) {
        continue;
      }
      int line = i + 1;
      List<String> values = columns(lines.get(i), CSV_FIELDS, 1, line);
      cards.add(new DetectedCard(requiredInt(values.get(0), "index", line), null, model(values.get(1), line),
          reading(values.get(2), "memory.total", line).orElse(0), reading(values.get(3), "memory.used", line).orElse(0),
          intReading(values.get(4), "utilization.gpu", line), intReading(values.get(5), "temperature.gpu", line),
          null));
    }
    return cards;
  }

  private static List<DetectedCard> tableCards(String output, HostProbe host) throws ToolOutputException {
    List<String> lines = output.lines().map(String::strip).toList();
    int next = 0;
    while (!lines.get(next).contains(TABLE_HEADER)) {
      next++;
    }
    while (next < lines.size() && !lines.get(next).startsWith("|=")) {
      next++;
    }
    if (next == lines.size()) {
      throw new ToolOutputException("table: no '|===' line under the column titles (output cut short?)");
    }
    List<DetectedCard> cards = new ArrayList<>();
    List<String> identityRow = null;
    String previous = lines.get(next++);
    for (; next < lines.size() && isTableLine(lines.get(next)); previous = lines.get(next++)) {
      int lineNumber = next + 1;
      if (lines.get(next).startsWith("+")) {
        if (identityRow != null) {
          throw new ToolOutputException("line " + (lineNumber - 1) + ": card row has no second row");
        }
      } else if (identityRow == null) {
        identityRow = cells(lines.get(next), 2, lineNumber);
      } else {
        cards.add(tableCard(identityRow, cells(lines.get(next), 3, lineNumber), host, lineNumber));
        identityRow = null;
      }
    }
    if (identityRow != null || cards.isEmpty() || !previous.startsWith("+")) {
      throw new ToolOutputException("line " + next + ": card table ends early (output cut short?)");
    }
    if (lines.subList(next, lines.size()).stream().noneMatch(rest -> rest.contains(PROCESSES_TITLE))) {
      throw new ToolOutputException("line " + next + ": card table is not followed by its '" + PROCESSES_TITLE
          + "' section (output cut short?)");
    }
    return cards;
  }

  private static boolean isTableLine(String line) {
    return line.startsWith("+") || (line.startsWith("|") && !line.contains(PROCESSES_TITLE));
  }

  private static List<String> cells(String row, int atLeast, int line) throws ToolOutputException {
    List<String> split = Arrays.stream(row.split("\\|")).map(String::strip).toList();
    List<String> cells = split.size() > 1 ? split.subList(1, split.size()) : List.of();
    if (cells.size() < atLeast || cells.get(0).isEmpty()) {
      throw new ToolOutputException("line " + line + ": expected " + atLeast + " cells split by '|' in '" + row + "'");
    }
    return cells;
  }

  private static DetectedCard tableCard(List<String> identity, List<String> usage, HostProbe host, int line)
      throws ToolOutputException {
    String[] indexAndName = identity.get(0).split("\\s+", 2);
    if (indexAndName.length < 2) {
      throw new ToolOutputException("line " + (line - 1) + ": no card name after index '" + indexAndName[0] + "'");
    }
    String[] fanTemperature = usage.get(0).split("\\s+");
    String[] usedAndTotal = usage.get(1).split("/");
    if (fanTemperature.length < 2 || usedAndTotal.length != 2) {
      throw new ToolOutputException("line " + line + ": expected 'fan temp ...' and 'used / total' in '"
          + String.join(" | ", usage) + "'");
    }
    return new DetectedCard(requiredInt(indexAndName[0], "index", line - 1), null, model(indexAndName[1], line - 1),
        reading(usedAndTotal[1], "memory total", line).orElse(0),
        reading(usedAndTotal[0], "memory used", line).orElse(0),
        intReading(usage.get(2).split("\\s+")[0], "GPU-Util", line),
        intReading(fanTemperature[1], "temperature", line),
        notReported(identity.get(1)) ? null : numaNode(host, identity.get(1), line - 1));
  }

  private static String model(String name, int line) throws ToolOutputException {
    if (name.isBlank()) {
      throw new ToolOutputException("line " + line + ": field name is empty");
    }
    return name.strip();
  }
}
