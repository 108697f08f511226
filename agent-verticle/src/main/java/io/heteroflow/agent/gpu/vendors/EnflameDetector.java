package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Enflame GCUs, read from the plain {@code efsmi} table (real samples of efsmi 1.2.0 and 1.7.2 are in the test
 * resources, samples/enflame). Each card is two table rows of three {@code |}-separated cells:
 * <pre>
 * | index  name...    | firmware | bus-id  ECC              |
 * | temp [C] Dpm|Lpm power... | memMiB  virt | DUsed%  serial |
 * </pre>
 * Cells are split into whitespace tokens, never read at fixed offsets. {@code Mem} is the total memory only;
 * DUsed is taken as the utilization; the serial number is reported as the card's uuid. The card index is the
 * DEV column, which is what TOPS_VISIBLE_DEVICES counts.
 */
public final class EnflameDetector extends ToolDetector {
  static final String TOOL = "efsmi";
  private static final Pattern BUS_ID = Pattern.compile("\\p{XDigit}{2,4}(:\\p{XDigit}{2})+\\.[0-7]");
  private static final Pattern INTEGER = Pattern.compile("\\d{1,9}");
  private static final Pattern MEBIBYTES = Pattern.compile("(\\d{1,12})MiB");
  private static final Pattern PERCENT = Pattern.compile("(\\d{1,3})(\\.\\d+)?%");

  public EnflameDetector() {
    super(GpuVendor.ENFLAME, TOOL, TOOL);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    return parseTable(output);
  }

  /** The cards in one efsmi table; throws when a card's rows are missing, truncated or unreadable. */
  static List<DetectedCard> parseTable(String output) throws ToolOutputException {
    List<DetectedCard> cards = new ArrayList<>();
    Set<Integer> seenIndices = new HashSet<>();
    String[] deviceRow = null;
    for (String rawLine : output.split("\\R")) {
      String line = rawLine.strip();
      if (!line.startsWith("|")) {
        continue; // banner, blank line or '+---+' border
      }
      if (line.length() < 2 || !line.endsWith("|")) {
        throw new ToolOutputException("efsmi output is truncated inside a table row: '" + line + "'");
      }
      String[] cells = line.substring(1, line.length() - 1).split("\\|", -1);
      if (cells.length != 3 && INTEGER.matcher(firstToken(cells[0])).matches()) {
        throw new ToolOutputException("efsmi output has a truncated or malformed card row: '" + line + "'");
      }
      boolean isDeviceRow = cells.length == 3 && BUS_ID.matcher(firstToken(cells[2])).matches();
      if (deviceRow != null) {
        if (cells.length != 3 || isDeviceRow) {
          throw new ToolOutputException("efsmi card '" + firstToken(deviceRow[0])
              + "' has no statistics row (TEMP | Mem | DUsed) after its device row (truncated or malformed "
              + "output); got '" + line + "'");
        }
        DetectedCard card = toCard(deviceRow, cells);
        if (!seenIndices.add(card.index())) {
          throw new ToolOutputException("efsmi lists card " + card.index() + " twice");
        }
        cards.add(card);
        deviceRow = null;
      } else if (isDeviceRow) {
        deviceRow = cells;
      }
    }
    if (deviceRow != null) {
      throw new ToolOutputException("efsmi output ends after the device row of card '"
          + firstToken(deviceRow[0]) + "' (truncated: no statistics row)");
    }
    if (cards.isEmpty()) {
      throw new ToolOutputException("efsmi output has no card rows (no '| index name | firmware | bus-id |' row)");
    }
    return List.copyOf(cards);
  }

  private static DetectedCard toCard(String[] deviceRow, String[] statisticsRow) throws ToolOutputException {
    List<String> identity = tokens(deviceRow[0]);
    int index = parseInteger(identity.isEmpty() ? "" : identity.get(0), "DEV index", deviceRow);
    if (identity.size() < 2) {
      throw new ToolOutputException("efsmi card " + index + " has no NAME in '" + String.join("|", deviceRow) + "'");
    }
    String model = String.join(" ", identity.subList(1, identity.size()));
    List<String> temperatureCell = tokens(statisticsRow[0]);
    List<String> memoryCell = tokens(statisticsRow[1]);
    List<String> usageCell = tokens(statisticsRow[2]);
    if (temperatureCell.isEmpty() || memoryCell.isEmpty() || usageCell.size() < 2) {
      throw new ToolOutputException("efsmi card " + index + ": statistics row has empty cells: '"
          + String.join("|", statisticsRow) + "'");
    }
    String temperature = temperatureCell.get(0);
    if (temperature.endsWith("C")) {
      temperature = temperature.substring(0, temperature.length() - 1); // tolerate '39C' as well as '39 C'
    }
    int temperatureC = parseInteger(temperature, "TEMP", statisticsRow);
    long memoryTotalMb = Long.parseLong(match(MEBIBYTES, memoryCell.get(0), "Mem", statisticsRow));
    int utilizationPercent = Integer.parseInt(match(PERCENT, usageCell.get(0), "DUsed", statisticsRow));
    String serialNumber = usageCell.get(1);
    return new DetectedCard(index, serialNumber, model, memoryTotalMb, 0, utilizationPercent, temperatureC, null);
  }

  private static int parseInteger(String token, String column, String[] row) throws ToolOutputException {
    return Integer.parseInt(match(INTEGER, token, column, row));
  }

  /** The first group (or the whole token) of a token that must match; otherwise a clear error. */
  private static String match(Pattern pattern, String token, String column, String[] row)
      throws ToolOutputException {
    var matcher = pattern.matcher(token);
    if (!matcher.matches()) {
      throw new ToolOutputException("efsmi " + column + " value '" + token + "' is not readable in row '"
          + String.join("|", row) + "'");
    }
    return matcher.groupCount() > 0 ? matcher.group(1) : matcher.group();
  }

  private static List<String> tokens(String cell) {
    String stripped = cell.strip();
    return stripped.isEmpty() ? List.of() : List.of(stripped.split("\\s+"));
  }

  private static String firstToken(String cell) {
    List<String> tokens = tokens(cell);
    return tokens.isEmpty() ? "" : tokens.get(0);
  }
}
