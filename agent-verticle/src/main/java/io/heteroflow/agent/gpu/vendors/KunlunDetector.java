package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.GpuDetector;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kunlunxin XPUs from {@code xpu-smi} (P800 and later drivers) or {@code xpu_smi} (older drivers), tried in
 * that order. Intel ships a different {@code xpu-smi}, so output counts as Kunlunxin's only when it has the
 * Kunlunxin banner ("XPU-SMI ... XPU-RT Version") or the legacy "DevID | PCI Addr" device table. Anything else
 * means "not this vendor" (an empty list), unless sysfs shows Kunlunxin PCI devices (vendor 0x1d22): then the
 * unreadable answer is an error. Two layouts are read, both by splitting rows on {@code |}: the current one
 * (a block of rows per card between '+' lines) and the legacy one (one row per card, columns named by a header).
 */
public final class KunlunDetector implements GpuDetector {
  private static final List<String> TOOLS = List.of("xpu-smi", "xpu_smi");
  private static final String PCI_DEVICES = "/sys/bus/pci/devices";
  private static final String KUNLUNXIN_PCI_VENDOR = "0x1d22";
  private static final Pattern USED_OF_TOTAL =
      Pattern.compile("(\\d{1,18})\\s*(?:MiB|MB)?\\s*/\\s*(\\d{1,18})\\s*(?:MiB|MB)");
  private static final Pattern TEMPERATURE = Pattern.compile("\\b(\\d{1,9})C\\b");
  private static final Pattern PERCENT = Pattern.compile("(\\d{1,9})\\s*%");

  @Override
  public GpuVendor vendor() {
    return GpuVendor.KUNLUN;
  }

  @Override
  public List<DetectedCard> detect(HostProbe host) throws ToolOutputException {
    String notKunlunxin = null;
    for (String tool : TOOLS) {
      Optional<String> output;
      try {
        output = host.run(tool);
      } catch (ToolOutputException failed) {
        notKunlunxin = failed.getMessage();
        continue;
      }
      if (output.isEmpty()) {
        continue;
      }
      String text = output.get();
      if (text.contains("XPU-SMI") && text.contains("XPU-RT Version")) {
        return currentTable(tool, text, host);
      }
      if (text.contains("DevID") && text.contains("PCI Addr")) {
        return legacyTable(tool, text, host);
      }
      notKunlunxin = tool + " printed no Kunlunxin device table (another vendor's tool?)";
    }
    if (notKunlunxin != null && kunlunxinPciDevicePresent(host)) {
      throw new ToolOutputException(notKunlunxin + "; yet Kunlunxin PCI devices (vendor 0x1d22) are present");
    }
    return List.of();
  }

  /** Card blocks after the "|===" line: "index name persistence | bus-id ..." then "fan temp ... | memory | util". */
  private static List<DetectedCard> currentTable(String tool, String text, HostProbe host) throws ToolOutputException {
    List<String> lines = text.lines().map(String::strip).toList();
    int headerStart = -1;
    int headerEnd = 0;
    while (headerEnd < lines.size() && !lines.get(headerEnd).startsWith("|=")) {
      headerStart = lines.get(headerEnd).startsWith("|-") ? headerEnd : headerStart;
      headerEnd++;
    }
    int rowsPerCard = headerStart < 0 ? 2 : Math.max(2, headerEnd - headerStart - 1);
    List<List<String[]>> blocks = new ArrayList<>();
    List<String[]> block = new ArrayList<>();
    for (String line : lines.subList(Math.min(headerEnd + 1, lines.size()), lines.size())) {
      if (line.startsWith("+")) {
        blocks.add(block);
        block = new ArrayList<>();
      } else if (line.startsWith("|") && !line.contains("Processes")) {
        block.add(cells(tool, line, 3));
      } else {
        break;
      }
    }
    blocks.add(block);
    blocks.removeIf(List::isEmpty);
    if (blocks.isEmpty()) {
      throw new ToolOutputException(tool + ": banner but no card rows (output cut off?)");
    }
    List<DetectedCard> cards = new ArrayList<>();
    for (List<String[]> rows : blocks) {
      String[] nameRow = rows.get(0);
      String[] indexAndName = nameRow[0].split("\\s+");
      if (rows.size() != rowsPerCard || indexAndName.length < 3) {
        throw new ToolOutputException(tool + ": card block cut off or out of shape: " + String.join(" | ", nameRow));
      }
      String[] statusRow = rows.get(1);
      long[] memory = usedOfTotal(tool, statusRow[1]);
      cards.add(new DetectedCard(number(tool, indexAndName[0]), null,
          String.join(" ", Arrays.copyOfRange(indexAndName, 1, indexAndName.length - 1)), memory[1], memory[0],
          firstNumber(PERCENT, statusRow[2]), firstNumber(TEMPERATURE, statusRow[0]),
          AscendDetector.numaNode(nameRow[1].split("\\s+")[0], host)));
    }
    return List.copyOf(cards);
  }

  /** The "DEVICES" table of old xpu_smi: one row per card under a "DevID | PCI Addr | Model | ..." header. */
  private static List<DetectedCard> legacyTable(String tool, String text, HostProbe host) throws ToolOutputException {
    List<String> lines = text.lines().map(String::strip).toList();
    int header = 0;
    while (header < lines.size() && !(lines.get(header).contains("DevID") && lines.get(header).contains("PCI Addr"))) {
      header++;
    }
    if (header == lines.size()) {
      throw new ToolOutputException(tool + ": no 'DevID | PCI Addr | ...' header row");
    }
    List<String> columns = Arrays.asList(cells(tool, lines.get(header), 0));
    int id = columns.indexOf("DevID");
    int address = columns.indexOf("PCI Addr");
    int model = columns.indexOf("Model");
    int useRate = columns.indexOf("UseRate");
    int memoryColumn = columns.indexOf("Memory");
    if (id < 0 || address < 0 || model < 0 || memoryColumn < 0) {
      throw new ToolOutputException(tool + ": device table lacks DevID, PCI Addr, Model or Memory: " + columns);
    }
    List<DetectedCard> cards = new ArrayList<>();
    for (String line : lines.subList(header + 1, lines.size())) {
      if (!line.startsWith("|")) {
        if (cards.isEmpty() && line.startsWith("-")) {
          continue;
        }
        break;
      }
      String[] row = cells(tool, line, columns.size());
      long[] memory = usedOfTotal(tool, row[memoryColumn]);
      cards.add(new DetectedCard(number(tool, row[id]), null, row[model], memory[1], memory[0],
          useRate < 0 ? 0 : firstNumber(PERCENT, row[useRate]), 0, AscendDetector.numaNode(row[address], host)));
    }
    if (cards.isEmpty()) {
      throw new ToolOutputException(tool + ": device table has no rows (output cut off?)");
    }
    return List.copyOf(cards);
  }

  /** The trimmed cells of a row closed by '|'; {@code expected} cells unless 0 (any number). */
  private static String[] cells(String tool, String line, int expected) throws ToolOutputException {
    String[] cells = line.length() > 1 && line.endsWith("|")
        ? Arrays.stream(line.substring(1, line.length() - 1).split("\\|", -1)).map(String::strip).toArray(String[]::new)
        : new String[0];
    if (cells.length == 0 || (expected > 0 && cells.length != expected)) {
      throw new ToolOutputException(tool + ": unreadable row (expected " + expected + " cells): " + line);
    }
    return cells;
  }

  private static long[] usedOfTotal(String tool, String cell) throws ToolOutputException {
    Matcher matcher = USED_OF_TOTAL.matcher(cell);
    if (!matcher.find()) {
      throw new ToolOutputException(tool + ": no 'used / total' memory in '" + cell + "'");
    }
    return new long[] {Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2))};
  }

  private static int number(String tool, String token) throws ToolOutputException {
    try {
      return Integer.parseInt(token);
    } catch (NumberFormatException e) {
      throw new ToolOutputException(tool + ": card index is not a number: '" + token + "'");
    }
  }

  /** The first match of a one-number pattern, or 0 where the tool prints N/A. */
  private static int firstNumber(Pattern pattern, String cell) {
    Matcher matcher = pattern.matcher(cell);
    return matcher.find() ? Integer.parseInt(matcher.group(1)) : 0;
  }

  private static boolean kunlunxinPciDevicePresent(HostProbe host) {
    return host.list(PCI_DEVICES).stream().anyMatch(device -> host.readFile(PCI_DEVICES + "/" + device + "/vendor")
        .map(vendor -> vendor.strip().equalsIgnoreCase(KUNLUNXIN_PCI_VENDOR)).orElse(false));
  }
}
