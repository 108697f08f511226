package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cambricon MLU cards, read from the plain {@code cnmon} table. Each card is a block of two rows between
 * {@code +---+} borders; columns are found by their header names (the header's third column differs by cnmon
 * version: {@code SR-IOV}, {@code Mode}, {@code vMemory-Usage}), never by character offsets.
 *
 * <p>Not {@code cnmon info -j}: that writes {@code cnmon_info.json} into the working directory instead of printing
 * JSON, so it would litter the agent's directory and race between agents sharing one, and no real sample of that
 * JSON was found to test against. The table reports no UUID or NUMA node, so those stay null.
 */
public final class CambriconDetector extends ToolDetector {
  static final String TOOL = "cnmon";
  private static final Pattern MEMORY_USAGE = Pattern.compile("(\\d+)\\s*MiB\\s*/\\s*(\\d+)\\s*MiB");

  public CambriconDetector() {
    super(GpuVendor.CAMBRICON, TOOL, TOOL);
  }

  @Override
  List<DetectedCard> read(String output, HostProbe host) throws ToolOutputException {
    return readCardTable(output);
  }

  private static List<DetectedCard> readCardTable(String output) throws ToolOutputException {
    List<String> lines = output.lines().map(String::strip).toList();
    int header = -1;
    for (int i = 0; i < lines.size() && header < 0; i++) {
      if (BarTable.isRow(lines.get(i)) && BarTable.firstToken(BarTable.cells(TOOL, lines.get(i)).get(0)).equals("Card")) {
        header = i;
      }
    }
    if (header < 0 || header + 1 >= lines.size() || !BarTable.isRow(lines.get(header + 1))) {
      throw new ToolOutputException(TOOL + " printed no card table (no 'Card VF Name' header rows)");
    }
    List<DetectedCard> cards = BarTable.twoRowBlocks(TOOL, "card", lines, header, CambriconDetector::card);
    return List.copyOf(cards);
  }

  private static DetectedCard card(List<String> nameHeader, List<String> nameRow, List<String> usageHeader,
                                   List<String> usageRow) throws ToolOutputException {
    String index = field(nameHeader, nameRow, "Card");
    if (!index.matches("\\d+")) {
      throw new ToolOutputException(TOOL + ": card index '" + index + "' is not a number");
    }
    String memory = field(usageHeader, usageRow, "Memory-Usage");
    Matcher usedOfTotal = MEMORY_USAGE.matcher(memory);
    if (!usedOfTotal.matches()) {
      throw new ToolOutputException(TOOL + ": card " + index + " memory '" + memory + "' is not 'used MiB/ total MiB'");
    }
    return new DetectedCard(Integer.parseInt(index), null, field(nameHeader, nameRow, "Name"),
        Long.parseLong(usedOfTotal.group(2)), Long.parseLong(usedOfTotal.group(1)),
        number(field(nameHeader, nameRow, "Util"), "utilisation"),
        number(field(usageHeader, usageRow, "Temp"), "temperature"), null);
  }

  private static String field(List<String> header, List<String> row, String name) throws ToolOutputException {
    return BarTable.field(TOOL, "card", header, row, name, List.of("Name", "Pwr:Usage/Cap"));
  }

  private static int number(String text, String what) throws ToolOutputException {
    return BarTable.number(TOOL, text, what);
  }

}
