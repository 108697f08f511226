package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Moore Threads cards from the default {@code mthreads-gmi} table. Each card is a block of three lines whose cells
 * are separated by {@code |}:
 * <pre>
 * 0    MTT S4000            |00000000:08:00.0    |0%    0MiB(49152MiB)
 *      Physical      N/A    |16x(16x)            |44C   YES
 *                                                |      N/A
 * </pre>
 * The first line gives index, model, utilisation and memory as one {@code used(total)} token; the second line's
 * last cell starts with the temperature. Cells are split into whitespace tokens, so column widths (which differ
 * between tool versions 1.x and 2.x) do not matter. The table reports no UUID and no NUMA node.
 */
public final class MusaDetector extends ToolDetector {
  static final String[] COMMAND = {"mthreads-gmi"};

  private static final Pattern USED_OF_TOTAL = Pattern.compile("(\\d{1,15})MiB\\((\\d{1,15})MiB\\)");
  private static final Pattern NUMBER = Pattern.compile("\\d{1,9}");
  private static final Pattern ANSI_ESCAPE = Pattern.compile("\u001B\\[[0-9;?]*[ -/]*[@-~]");

  public MusaDetector() {
    super(GpuVendor.MUSA, "mthreads-gmi", COMMAND);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    return parseTable(output);
  }

  static List<DetectedCard> parseTable(String output) throws ToolOutputException {
    List<String> lines = ANSI_ESCAPE.matcher(output).replaceAll("").lines().toList();
    int header = indexOfHeader(lines);
    List<DetectedCard> cards = new ArrayList<>();
    for (int i = header + 1; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.strip().startsWith("Processes:")) {
        break;
      }
      String[] cells = line.split("\\|", -1);
      if (cells.length != 3 || !NUMBER.matcher(cells[0].strip().split("\\s+")[0]).matches()) {
        continue;
      }
      if (i + 1 >= lines.size()) {
        throw new ToolOutputException("mthreads-gmi output ends inside the block of card "
            + cells[0].strip().split("\\s+")[0] + " (no temperature line)");
      }
      cards.add(card(cells, lines.get(i + 1)));
      i++;
    }
    if (cards.isEmpty()) {
      throw new ToolOutputException("mthreads-gmi printed its table header but no card rows");
    }
    return cards;
  }

  private static int indexOfHeader(List<String> lines) throws ToolOutputException {
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.startsWith("ID ") && line.contains("|") && line.contains("%GPU")) {
        return i;
      }
    }
    throw new ToolOutputException("mthreads-gmi output has no device table (no 'ID … | … | %GPU  Mem' header)");
  }

  private static DetectedCard card(String[] firstLine, String secondLine) throws ToolOutputException {
    String[] identity = firstLine[0].strip().split("\\s+");
    int index = Integer.parseInt(identity[0]);
    if (identity.length < 2) {
      throw new ToolOutputException("mthreads-gmi card " + index + " has no model name");
    }
    String model = String.join(" ", Arrays.copyOfRange(identity, 1, identity.length));
    String[] usage = firstLine[2].strip().split("\\s+");
    if (usage.length < 2) {
      throw new ToolOutputException("mthreads-gmi card " + index + ": expected '%GPU used(total)' but got '"
          + firstLine[2].strip() + "'");
    }
    Matcher memory = USED_OF_TOTAL.matcher(usage[1]);
    if (!memory.matches()) {
      throw new ToolOutputException("mthreads-gmi card " + index + ": memory '" + usage[1]
          + "' is not of the form <used>MiB(<total>MiB)");
    }
    String[] secondCells = secondLine.split("\\|", -1);
    if (secondCells.length != 3 || secondCells[2].isBlank()) {
      throw new ToolOutputException("mthreads-gmi card " + index + ": second line has no temperature cell: '"
          + secondLine.strip() + "'");
    }
    String temperature = secondCells[2].strip().split("\\s+")[0];
    return new DetectedCard(index, null, model, Long.parseLong(memory.group(2)), Long.parseLong(memory.group(1)),
        reading(usage[0], "%", index, "utilisation"), reading(temperature, "C", index, "temperature"), null);
  }

  /** A value such as {@code 88%} or {@code 65C}; {@code N/A} (not reported) reads as 0. */
  private static int reading(String token, String unit, int index, String what) throws ToolOutputException {
    if (token.equals("N/A")) {
      return 0;
    }
    String digits = token.substring(0, Math.max(0, token.length() - unit.length()));
    if (!token.endsWith(unit) || !NUMBER.matcher(digits).matches()) {
      throw new ToolOutputException("mthreads-gmi card " + index + ": " + what + " '" + token
          + "' is not a number followed by " + unit);
    }
    return Integer.parseInt(digits);
  }
}
