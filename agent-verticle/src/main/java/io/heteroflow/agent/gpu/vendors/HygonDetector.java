package io.heteroflow.agent.gpu.vendors;

import io.heteroflow.agent.gpu.DetectedCard;
import io.heteroflow.agent.gpu.GpuDetector;
import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import io.heteroflow.protocol.GpuVendor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hygon DCU cards from {@code hy-smi}. The JSON form is asked first because it alone carries model, unique id and
 * memory in MiB; older and newer DTKs differ in its keys ({@code DCU use (%)} / {@code HCU use (%)}), add an empty
 * {@code "": ""} key, and newer ones drop commas between power keys, so card objects are read leniently as
 * {@code "key": value} pairs rather than with a strict JSON parser. If that command is refused (non-zero exit), the
 * plain table is read instead: its header starts with {@code DCU} or {@code HCU} and its columns (with or without
 * {@code Fan}, {@code Dec%}, {@code Enc%}, {@code Mode}) are located by name; it has no model and no memory size.
 * ANSI colour codes are removed from both forms.
 */
public final class HygonDetector implements GpuDetector {
  static final String[] JSON_COMMAND = {"hy-smi", "-i", "--showmeminfo", "vram", "--showpower", "--showserial",
      "--showuse", "--showtemp", "--showproductname", "--showuniqueid", "--json"};
  static final String[] TABLE_COMMAND = {"hy-smi"};

  private static final Pattern ANSI_ESCAPE = Pattern.compile("\u001B\\[[0-9;?]*[ -/]*[@-~]");
  private static final Pattern CARD_OBJECT = Pattern.compile("\"card(\\d{1,4})\"\\s*:\\s*\\{([^{}]*)}");
  private static final Pattern FIELD = Pattern.compile("\"([^\"]*)\"\\s*:\\s*(?:\"([^\"]*)\"|([-+0-9.eE]+))");
  private static final Pattern DECIMAL = Pattern.compile("[-+]?\\d{1,12}(\\.\\d+)?");
  private static final List<String> TEMPERATURE_KEYS = List.of("Temperature (Sensor edge) (C)",
      "Temperature (Sensor junction) (C)", "Temperature (Sensor core) (C)", "Temperature (Sensor mem) (C)");

  @Override
  public GpuVendor vendor() {
    return GpuVendor.HYGON;
  }

  @Override
  public List<DetectedCard> detect(HostProbe host) throws ToolOutputException {
    Optional<String> json;
    String refusal = null;
    try {
      json = host.run(JSON_COMMAND);
    } catch (ToolOutputException refused) {
      json = Optional.empty();
      refusal = refused.getMessage();
    }
    try {
      if (json.isPresent()) {
        return parseJson(withoutAnsi(json.get()));
      }
      Optional<String> table = host.run(TABLE_COMMAND);
      if (table.isEmpty()) {
        return List.of();
      }
      return parseTable(withoutAnsi(table.get()));
    } catch (ToolOutputException unreadable) {
      throw refusal == null ? unreadable
          : new ToolOutputException(unreadable.getMessage() + " (after the JSON form failed: " + refusal + ")");
    } catch (RuntimeException unexpected) {
      throw new ToolOutputException("hy-smi output could not be read: " + unexpected);
    }
  }

  static List<DetectedCard> parseJson(String output) throws ToolOutputException {
    String text = output.strip();
    if (!text.startsWith("{") || !text.endsWith("}") || count(text, '{') != count(text, '}')) {
      throw new ToolOutputException("hy-smi --json output is not one complete JSON object: '" + abbreviate(text) + "'");
    }
    List<DetectedCard> cards = new ArrayList<>();
    Matcher card = CARD_OBJECT.matcher(text);
    while (card.find()) {
      Map<String, String> fields = new HashMap<>();
      Matcher field = FIELD.matcher(card.group(2));
      while (field.find()) {
        fields.putIfAbsent(field.group(1), field.group(2) != null ? field.group(2) : field.group(3));
      }
      cards.add(jsonCard(Integer.parseInt(card.group(1)), fields));
    }
    if (cards.isEmpty()) {
      throw new ToolOutputException("hy-smi --json output has no \"cardN\": {…} objects: '" + abbreviate(text) + "'");
    }
    return cards;
  }

  private static DetectedCard jsonCard(int index, Map<String, String> fields) throws ToolOutputException {
    String where = "hy-smi card" + index;
    String use = fields.containsKey("HCU use (%)") ? "HCU use (%)" : "DCU use (%)";
    String temperatureKey = TEMPERATURE_KEYS.stream().filter(fields::containsKey).findFirst().orElse(null);
    return new DetectedCard(index, fields.get("Unique ID"), fields.get("Card Series"),
        Math.round(required(fields, "vram Total Memory (MiB)", where)),
        Math.round(required(fields, "vram Total Used Memory (MiB)", where)),
        (int) Math.round(required(fields, use, where)),
        temperatureKey == null ? 0 : (int) Math.round(number(fields.get(temperatureKey), where, temperatureKey)),
        null);
  }

  private static double required(Map<String, String> fields, String key, String where) throws ToolOutputException {
    if (!fields.containsKey(key)) {
      throw new ToolOutputException(where + " has no \"" + key + "\" (keys: " + fields.keySet() + ")");
    }
    return number(fields.get(key), where, key);
  }

  static List<DetectedCard> parseTable(String output) throws ToolOutputException {
    List<String> lines = output.lines().toList();
    int header = 0;
    while (header < lines.size() && !isHeader(lines.get(header))) {
      header++;
    }
    if (header == lines.size()) {
      throw new ToolOutputException("hy-smi output has no table header starting with DCU or HCU: '"
          + abbreviate(output.strip()) + "'");
    }
    List<String> columns = Arrays.asList(lines.get(header).strip().split("\\s+"));
    int use = columns.indexOf(columns.get(0) + "%");
    int temperature = columns.indexOf("Temp");
    if (use < 0) {
      throw new ToolOutputException("hy-smi table header has no " + columns.get(0) + "% column: " + columns);
    }
    List<DetectedCard> cards = new ArrayList<>();
    for (String line : lines.subList(header + 1, lines.size())) {
      if (line.strip().startsWith("=")) {
        return cards;
      }
      if (line.isBlank()) {
        continue;
      }
      String[] cells = line.strip().split("\\s+");
      if (cells.length != columns.size() || !cells[0].matches("\\d{1,4}")) {
        throw new ToolOutputException("hy-smi table row does not match header " + columns + ": '" + line.strip() + "'");
      }
      String where = "hy-smi " + columns.get(0) + " " + cells[0];
      cards.add(new DetectedCard(Integer.parseInt(cells[0]), null, null, 0, 0,
          (int) Math.round(number(cells[use], where, columns.get(use))),
          (int) Math.round(number(cells[temperature], where, "Temp")), null));
    }
    throw new ToolOutputException("hy-smi table ends without its closing '====' line (output cut short?)");
  }

  private static boolean isHeader(String line) {
    List<String> tokens = Arrays.asList(line.strip().split("\\s+"));
    return (tokens.get(0).equals("DCU") || tokens.get(0).equals("HCU")) && tokens.contains("Temp");
  }

  /** A reading such as {@code 49.0C}, {@code 31.0c}, {@code 0.0%} or {@code "65520"}; {@code N/A} reads as 0. */
  private static double number(String value, String where, String what) throws ToolOutputException {
    String digits = value.strip().replaceAll("(?i)(°?C|%)$", "");
    if (digits.equalsIgnoreCase("N/A")) {
      return 0;
    }
    if (!DECIMAL.matcher(digits).matches()) {
      throw new ToolOutputException(where + ": " + what + " '" + value + "' is not a number");
    }
    return Double.parseDouble(digits);
  }

  private static long count(String text, char wanted) {
    return text.chars().filter(c -> c == wanted).count();
  }

  private static String withoutAnsi(String text) {
    return ANSI_ESCAPE.matcher(text).replaceAll("");
  }

  private static String abbreviate(String text) {
    return text.length() <= 80 ? text : text.substring(0, 80) + "…";
  }
}
