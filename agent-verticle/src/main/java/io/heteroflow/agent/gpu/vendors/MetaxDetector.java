package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * MetaX GPUs, read from the plain {@code mx-smi} table. Each GPU is a block of two rows between {@code +---+}
 * borders; columns are found by header name, so both layouts seen so far read the same way: 2.1/2.2
 * ({@code GPU NAME | Bus-id | GPU-Util}) and 2.2.9 ({@code Board Name | GPU Persist-M | Bus-id | GPU-Util sGPU-M}).
 * The index is the {@code GPU} column (what CUDA_VISIBLE_DEVICES counts), not the board.
 *
 * <p>The model is normalised to the compact form {@code MXC550}: mx-smi 2.1.x prints {@code MXC550}, 2.2.x prints
 * {@code MetaX C550}. The compact form has no space, so it is safe in labels and selectors. The table reports
 * no UUID or NUMA node, so those stay null. When the header's "Attached GPUs" count disagrees with the table,
 * the output was cut off.
 */
public final class MetaxDetector extends ToolDetector {
  static final String TOOL = "mx-smi";
  private static final Pattern MEMORY_USAGE = Pattern.compile("(\\d+)\\s*(?:MiB)?\\s*/\\s*(\\d+)\\s*MiB");
  private static final Pattern SPELLED_OUT_MODEL = Pattern.compile("(?i)metax\\s+(\\S+)");
  /** The cell column that takes a header cell's spare tokens: the first of these it holds. */
  private static final List<String> FREE_TEXT_COLUMNS = List.of("Pwr:Usage/Cap", "Power", "Name", "NAME");
  private static final Pattern ATTACHED_GPUS = Pattern.compile("Attached GPUs\\s*:\\s*(\\d+)");

  public MetaxDetector() {
    super(GpuVendor.METAX, TOOL, TOOL);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    return readGpuTable(output);
  }

  /** {@code MetaX C550} and {@code MXC550} both become {@code MXC550}; anything else is kept as printed. */
  static String normalisedModel(String printed) {
    Matcher spelledOut = SPELLED_OUT_MODEL.matcher(printed);
    return spelledOut.matches() ? "MX" + spelledOut.group(1) : printed;
  }

  private static List<DetectedCard> readGpuTable(String output) throws ToolOutputException {
    List<String> lines = output.lines().map(String::strip).toList();
    int header = -1;
    Integer attached = null;
    for (int i = 0; i < lines.size() && header < 0; i++) {
      Matcher count = ATTACHED_GPUS.matcher(lines.get(i));
      if (count.matches()) {
        attached = Integer.valueOf(count.group(1));
      } else if (BarTable.isRow(lines.get(i)) && BarTable.tokens(String.join(" ", BarTable.cells(TOOL, lines.get(i)))).contains("Bus-id")) {
        header = i;
      }
    }
    if (header < 0 || header + 1 >= lines.size() || !BarTable.isRow(lines.get(header + 1))) {
      throw new ToolOutputException(TOOL + " printed no GPU table (no 'Bus-id' header rows)");
    }
    List<DetectedCard> cards = BarTable.twoRowBlocks(TOOL, "GPU", lines, header, MetaxDetector::card);
    if (attached != null && attached != cards.size()) {
      throw new ToolOutputException(TOOL + " reports " + attached + " attached GPUs but its table lists "
          + cards.size() + " (output cut off?)");
    }
    return List.copyOf(cards);
  }

  private static DetectedCard card(List<String> nameHeader, List<String> nameRow, List<String> usageHeader,
                                   List<String> usageRow) throws ToolOutputException {
    String index = field(nameHeader, nameRow, "GPU");
    if (!index.matches("\\d+")) {
      throw new ToolOutputException(TOOL + ": GPU index '" + index + "' is not a number");
    }
    String memory = field(usageHeader, usageRow, "Memory-Usage");
    Matcher usedOfTotal = MEMORY_USAGE.matcher(memory);
    if (!usedOfTotal.matches()) {
      throw new ToolOutputException(TOOL + ": GPU " + index + " memory '" + memory + "' is not 'used/total MiB'");
    }
    String model = nameHeader.stream().anyMatch(cell -> BarTable.tokens(cell).contains("NAME"))
        ? field(nameHeader, nameRow, "NAME") : field(nameHeader, nameRow, "Name");
    return new DetectedCard(Integer.parseInt(index), null, normalisedModel(model),
        Long.parseLong(usedOfTotal.group(2)), Long.parseLong(usedOfTotal.group(1)),
        number(field(nameHeader, nameRow, "GPU-Util"), "utilisation"),
        number(field(usageHeader, usageRow, "Temp"), "temperature"), null);
  }

  private static String field(List<String> header, List<String> row, String name) throws ToolOutputException {
    return BarTable.field(TOOL, "GPU", header, row, name, FREE_TEXT_COLUMNS);
  }

  private static int number(String text, String what) throws ToolOutputException {
    return BarTable.number(TOOL, text, what);
  }

}
