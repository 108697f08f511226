package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Huawei Ascend NPUs from the {@code npu-smi info} table, read by splitting rows on {@code |} (column widths
 * differ between driver versions). Each chip takes two rows: "NPU Name | Health | Power Temp Hugepages" and
 * "Chip [Device|Phy-ID] | Bus-Id | AICore Memory-Usage [HBM-Usage]". Where the second header names a Device
 * (310, 310P, 910A) or Phy-ID (A3, two chips per NPU) column, that number is the index the visibility
 * variable uses; otherwise (910B, one chip per NPU) it is the NPU id. Memory is HBM when the table has that
 * column, else Memory-Usage. Power and temperature may read {@code NA} or {@code -}; those become 0.
 */
public final class AscendDetector extends ToolDetector {
  private static final String COMMAND = "npu-smi info";
  private static final Pattern USED_OF_TOTAL = Pattern.compile("(\\d{1,18})\\s*/\\s*(\\d{1,18})");
  private static final Pattern BUS_ID = Pattern.compile("([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-7])");

  public AscendDetector() {
    super(GpuVendor.ASCEND, COMMAND, "npu-smi", "info");
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    String[] chipHeader = null;
    List<String[]> chipRows = new ArrayList<>();
    for (String rawLine : output.split("\\R")) {
      String line = rawLine.strip();
      if (!line.startsWith("|")) {
        continue;
      }
      String[] cells = cells(line);
      if (Arrays.stream(cells).anyMatch(cell -> cell.contains("Process") || cell.contains("processes"))) {
        break;
      }
      if (cells.length >= 2 && cells[0].startsWith("Chip") && cells[1].equals("Bus-Id")) {
        chipHeader = cells;
      } else if (chipHeader != null && !(cells[0].startsWith("NPU") && cells.length > 1 && cells[1].equals("Health"))) {
        if (!line.endsWith("|") || cells.length != 3) {
          throw new ToolOutputException(COMMAND + ": unreadable row (expected 3 cells between '|'): " + line);
        }
        chipRows.add(cells);
      }
    }
    if (chipHeader == null || chipHeader.length != 3) {
      throw new ToolOutputException(COMMAND + ": no device table (header row 'Chip | Bus-Id | ...' not found)");
    }
    if (chipRows.isEmpty() || chipRows.size() % 2 != 0) {
      throw new ToolOutputException(COMMAND + ": device table is empty or cut off (" + chipRows.size()
          + " rows; each chip has two)");
    }
    boolean hasDeviceIdColumn = words(chipHeader[0]).length >= 2;
    boolean hasHbmColumn = chipHeader[2].contains("HBM-Usage");
    List<DetectedCard> cards = new ArrayList<>();
    for (int row = 0; row < chipRows.size(); row += 2) {
      cards.add(card(chipRows.get(row), chipRows.get(row + 1), hasDeviceIdColumn, hasHbmColumn, host));
    }
    return List.copyOf(cards);
  }

  private static DetectedCard card(String[] nameRow, String[] chipRow, boolean hasDeviceIdColumn,
                                   boolean hasHbmColumn, HostProbe host) throws ToolOutputException {
    String[] npuAndName = words(nameRow[0]);
    String[] chipIds = words(chipRow[0]);
    String[] powerAndTemperature = words(nameRow[2]);
    String[] aiCoreAndMemory = words(chipRow[2]);
    String busId = chipRow[1];
    if (npuAndName.length < 2 || chipIds.length < (hasDeviceIdColumn ? 2 : 1) || powerAndTemperature.length < 2
        || aiCoreAndMemory.length < 1 || !(busId.equals("NA") || BUS_ID.matcher(busId).matches())) {
      throw new ToolOutputException(COMMAND + ": chip rows out of shape: " + String.join(" | ", nameRow)
          + " / " + String.join(" | ", chipRow));
    }
    int npuId = number(npuAndName[0], "NPU id");
    int index = hasDeviceIdColumn ? number(chipIds[1], "Device/Phy-ID") : npuId;
    String model = String.join(" ", Arrays.copyOfRange(npuAndName, 1, npuAndName.length));
    List<long[]> usages = new ArrayList<>();
    Matcher pair = USED_OF_TOTAL.matcher(chipRow[2]);
    while (pair.find()) {
      usages.add(new long[] {Long.parseLong(pair.group(1)), Long.parseLong(pair.group(2))});
    }
    if (usages.size() < (hasHbmColumn ? 2 : 1)) {
      throw new ToolOutputException(COMMAND + ": no 'used / total' memory for NPU " + npuId + ": " + chipRow[2]);
    }
    long[] memory = hasHbmColumn ? usages.get(1) : usages.get(0);
    return new DetectedCard(index, null, model, memory[1], memory[0],
        numberOrZero(aiCoreAndMemory[0], "AICore(%)"), numberOrZero(powerAndTemperature[1], "Temp(C)"),
        numaNode(busId, host));
  }

  /** The trimmed cells between the outer '|' of a table row. */
  private static String[] cells(String line) {
    String inner = line.substring(1, line.endsWith("|") && line.length() > 1 ? line.length() - 1 : line.length());
    return Arrays.stream(inner.split("\\|", -1)).map(String::strip).toArray(String[]::new);
  }

  private static String[] words(String cell) {
    return cell.isBlank() ? new String[0] : cell.strip().split("\\s+");
  }

  private static int number(String token, String column) throws ToolOutputException {
    try {
      return Integer.parseInt(token);
    } catch (NumberFormatException e) {
      throw new ToolOutputException(COMMAND + ": " + column + " is not a number: '" + token + "'");
    }
  }

  /** A number, or 0 where npu-smi prints NA or - for a value it does not have. */
  private static int numberOrZero(String token, String column) throws ToolOutputException {
    return token.equals("NA") || token.equals("-") ? 0 : number(token, column);
  }

  /** The NUMA node sysfs gives for a PCI address as a vendor tool prints it; null when unknown. Shared with Kunlun. */
  static Integer numaNode(String busId, HostProbe host) {
    Matcher address = BUS_ID.matcher(busId);
    if (!address.matches()) {
      return null;
    }
    String domain = address.group(1).substring(address.group(1).length() - 4);
    String path = "/sys/bus/pci/devices/" + (domain + ":" + address.group(2)).toLowerCase(Locale.ROOT) + "/numa_node";
    try {
      int node = Integer.parseInt(host.readFile(path).orElse("-1").strip());
      return node < 0 ? null : node;
    } catch (NumberFormatException unreadable) {
      return null;
    }
  }
}
