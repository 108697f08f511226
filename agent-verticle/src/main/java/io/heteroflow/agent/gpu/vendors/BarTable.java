package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.ToolOutputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The bar-drawn tables of nvidia-smi-like tools (cnmon, mx-smi): rows between {@code |} bars, blocks of two
 * rows per card separated by {@code +---+} borders, read by cells and tokens, never by fixed offsets.
 */
final class BarTable {
  private static final java.util.regex.Pattern NUMBER_WITH_UNIT =
      java.util.regex.Pattern.compile("(\\d+)\\s*(%|C)?");

  private BarTable() {}

  /** Makes one card from the two header rows and the card's two rows. */
  interface CardReader {
    DetectedCard card(List<String> nameHeader, List<String> nameRow, List<String> usageHeader, List<String> usageRow)
        throws ToolOutputException;
  }

  static boolean isRow(String line) {
    return line.startsWith("|") && !isBorder(line);
  }

  static boolean isBorder(String line) {
    return !line.isEmpty() && line.chars().allMatch(c -> c == '+' || c == '-' || c == '=' || c == '|');
  }

  /** The cells between the bars of a row, stripped; a row that does not end with a bar was cut off. */
  static List<String> cells(String tool, String row) throws ToolOutputException {
    if (row.length() < 2 || !row.endsWith("|")) {
      throw new ToolOutputException(tool + ": table row is cut off: '" + row + "'");
    }
    return Arrays.stream(row.substring(1, row.length() - 1).split("\\|", -1)).map(String::strip).toList();
  }

  static List<String> tokens(String cell) {
    return cell.isBlank() ? List.of() : List.of(cell.strip().split("\\s+"));
  }

  static String firstToken(String cell) {
    List<String> tokens = tokens(cell);
    return tokens.isEmpty() ? "" : tokens.get(0);
  }

  /**
   * The cards of a table whose two header rows start at {@code header}: two rows per card, a border after each,
   * up to the first empty line. A block of one row, a row with the wrong number of cells, a stray line or a table
   * not closed by a border is an error naming the line ({@code unit} is "card" or "GPU" in the messages).
   */
  static List<DetectedCard> twoRowBlocks(String tool, String unit, List<String> lines, int header, CardReader reader)
      throws ToolOutputException {
    List<String> nameHeader = cells(tool, lines.get(header));
    List<String> usageHeader = cells(tool, lines.get(header + 1));
    List<DetectedCard> cards = new ArrayList<>();
    List<List<String>> block = new ArrayList<>();
    int lineNumber = header + 2;
    for (; lineNumber < lines.size() && !lines.get(lineNumber).isEmpty(); lineNumber++) {
      String line = lines.get(lineNumber);
      if (isBorder(line)) {
        if (block.size() == 1) {
          throw new ToolOutputException(tool + ": " + unit + " block ending at line " + (lineNumber + 1)
              + " has one row, not two");
        }
        if (block.size() == 2) {
          cards.add(reader.card(nameHeader, block.get(0), usageHeader, block.get(1)));
        }
        block.clear();
      } else if (isRow(line) && block.size() < 2) {
        List<String> row = cells(tool, line);
        int expected = block.isEmpty() ? nameHeader.size() : usageHeader.size();
        if (row.size() != expected) {
          throw new ToolOutputException(tool + ": line " + (lineNumber + 1) + " has " + row.size()
              + " columns, the header has " + expected + ": '" + line + "'");
        }
        block.add(row);
      } else {
        throw new ToolOutputException(tool + ": unexpected line " + (lineNumber + 1) + " in the " + unit + " table: '"
            + line + "'");
      }
    }
    if (!block.isEmpty() || !isBorder(lines.get(lineNumber - 1))) {
      throw new ToolOutputException(tool + " " + unit + " table is cut off after " + cards.size() + " " + unit + "(s)");
    }
    return cards;
  }

  /**
   * The value under {@code name} in a row. A header cell holding several names ("Fan Temp Pwr:Usage/Cap") maps
   * tokens one to one, except that its free-text column (the first of {@code freeText} it holds, else its last)
   * takes the spare tokens.
   */
  static String field(String tool, String unit, List<String> header, List<String> row, String name,
                      List<String> freeText) throws ToolOutputException {
    for (int cell = 0; cell < header.size(); cell++) {
      List<String> names = tokens(header.get(cell));
      int position = names.indexOf(name);
      if (position < 0) {
        continue;
      }
      List<String> values = tokens(row.get(cell));
      if (names.size() == 1) {
        return String.join(" ", values);
      }
      if (values.size() < names.size()) {
        throw new ToolOutputException(tool + ": '" + row.get(cell) + "' has fewer values than '" + header.get(cell) + "'");
      }
      int wide = freeText.stream().filter(names::contains).findFirst().map(names::indexOf).orElse(names.size() - 1);
      int spare = values.size() - names.size();
      if (position != wide) {
        return values.get(position < wide ? position : position + spare);
      }
      return String.join(" ", values.subList(wide, wide + spare + 1));
    }
    throw new ToolOutputException(tool + ": the " + unit + " table has no '" + name + "' column");
  }

  /** A whole number with an optional % or C unit; N/A reads as 0. */
  static int number(String tool, String text, String what) throws ToolOutputException {
    if (text.equals("N/A")) {
      return 0;
    }
    java.util.regex.Matcher matcher = NUMBER_WITH_UNIT.matcher(text);
    if (!matcher.matches()) {
      throw new ToolOutputException(tool + ": " + what + " '" + text + "' is not a number");
    }
    return Integer.parseInt(matcher.group(1));
  }
}
