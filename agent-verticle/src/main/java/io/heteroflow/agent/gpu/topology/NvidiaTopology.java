package io.heteroflow.agent.gpu.topology;

import io.heteroflow.agent.gpu.HostProbe;
import io.heteroflow.agent.gpu.ToolOutputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code nvidia-smi topo -m} into the node label {@code heteroflow.io/gpu-topology}:
 * {@code nvlink=<groups>;numa=<per card>}. Groups are the connected components of the NV# links between GPUs
 * (dash-joined, sorted, size two or more, ordered by first card; empty when there is no NVLink); {@code numa} is
 * each GPU's "NUMA Affinity" in GPU order, {@code -} when unknown ({@code N/A}, empty, a range or a list).
 *
 * <p>Columns are found by header names, never by offsets. Tab-separated output (what the tool prints) is read
 * cell by cell, so an empty CPU or NUMA affinity keeps its place; output whose tabs were turned into spaces is
 * read as whitespace-separated words, the affinity fields aligned from the right. NIC columns and rows, the
 * legend and ANSI escape codes are ignored. Output that cannot be read this way is a {@link ToolOutputException}.
 */
public final class NvidiaTopology {
  public static final String[] COMMAND = {"nvidia-smi", "topo", "-m"};

  private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;?]*[ -/]*[@-~]");
  private static final Pattern GPU = Pattern.compile("GPU(\\d{1,6})");
  private static final Pattern LINK = Pattern.compile("X|NV\\d+|PIX|PXB|PHB|NODE|SYS|SOC");
  private static final Pattern NUMBER = Pattern.compile("\\d{1,9}");
  private static final Pattern ID = Pattern.compile("\\d{1,9}|N/A");
  private static final List<String> AFFINITY = List.of("CPU Affinity", "NUMA Affinity", "GPU NUMA ID");

  private NvidiaTopology() {}

  /** The label for this host; empty when nvidia-smi is not installed. */
  public static Optional<String> detect(HostProbe host, int gpuCount) throws ToolOutputException {
    Optional<String> output = host.run(COMMAND);
    return output.isEmpty() ? Optional.empty() : Optional.of(label(output.get(), gpuCount));
  }

  public static String label(String topoOutput, int gpuCount) throws ToolOutputException {
    if (topoOutput == null || topoOutput.isBlank()) {
      throw fail("empty output");
    }
    String[] lines = ANSI.matcher(topoOutput).replaceAll("").split("\\R");
    int header = 0;
    while (header < lines.length && !isHeader(words(lines[header]))) {
      header++;
    }
    if (header == lines.length) {
      throw fail("no header row (GPU0 ... CPU Affinity) in the output");
    }
    List<String> words = words(lines[header]);
    int first = words.indexOf("GPU0");
    int end = first;
    while (end < words.size() && !Arrays.asList("CPU", "NUMA", "GPU").contains(words.get(end))) {
      end++;
    }
    List<String> devices = words.subList(first, end);
    List<String> affinity = new ArrayList<>();
    String rest = String.join(" ", words.subList(end, words.size()));
    for (String name : AFFINITY) {
      if (rest.startsWith(name)) {
        affinity.add(name);
        rest = rest.substring(name.length()).trim();
      }
    }
    if (!rest.isEmpty()) {
      throw fail("unknown header column '" + rest + "'");
    }
    int gpus = 0;
    while (gpus < devices.size() && devices.get(gpus).equals("GPU" + gpus)) {
      gpus++;
    }
    for (String device : devices.subList(gpus, devices.size())) {
      if (GPU.matcher(device).matches() || !device.matches("[\\w.:-]+")) {
        throw fail("unexpected header column '" + device + "' after GPU" + (gpus - 1));
      }
    }
    if (gpus != gpuCount) {
      throw fail("the matrix lists " + gpus + " GPUs but " + gpuCount + " were detected");
    }
    String[][] links = new String[gpus][];
    String[] numa = new String[gpus];
    for (int i = header + 1; i < lines.length && !lines[i].trim().startsWith("Legend:"); i++) {
      List<String> row = words(lines[i]);
      Matcher gpu = row.isEmpty() ? null : GPU.matcher(row.get(0));
      if (gpu == null || !gpu.matches()) {
        continue; // NIC rows, blank lines
      }
      int card = Integer.parseInt(gpu.group(1));
      if (card >= gpus || links[card] != null) {
        throw fail("unexpected or repeated row " + row.get(0));
      }
      boolean tabs = lines[i].contains("\t");
      List<String> cells = tabs ? cells(lines[i]) : row;
      if (cells.size() < 1 + devices.size()) {
        throw fail("row " + row.get(0) + " has " + (cells.size() - 1) + " cells, header has " + devices.size());
      }
      List<String> tail = cells.subList(1 + devices.size(), cells.size());
      long filled = tail.stream().filter(cell -> !cell.isEmpty()).count();
      if (filled > affinity.size()) {
        throw fail("row " + row.get(0) + " has more cells than the header columns (ragged row)");
      }
      links[card] = cells.subList(1, 1 + gpus).toArray(String[]::new);
      for (int column = 0; column < devices.size(); column++) {
        String cell = cells.get(1 + column);
        if (!LINK.matcher(cell).matches() || (column == card) != cell.equals("X")) {
          throw fail("row " + row.get(0) + ": unreadable cell '" + cell + "' under " + devices.get(column));
        }
      }
      numa[card] = numa(affinity, tail, tabs, row.get(0));
    }
    for (int card = 0; card < gpus; card++) {
      if (links[card] == null) {
        throw fail("no row for GPU" + card + " (truncated output?)");
      }
    }
    return "nvlink=" + groups(links) + ";numa=" + String.join(",", numa);
  }

  /** The NUMA Affinity of a row: tab cells keep their places; space-separated words are aligned from the right. */
  private static String numa(List<String> affinity, List<String> tail, boolean tabs, String row)
      throws ToolOutputException {
    int at = affinity.indexOf("NUMA Affinity");
    if (!tabs) {
      if (affinity.contains("GPU NUMA ID") && !tail.isEmpty() && !ID.matcher(tail.get(tail.size() - 1)).matches()) {
        throw fail("row " + row + ": unreadable GPU NUMA ID '" + tail.get(tail.size() - 1) + "'");
      }
      at = at < 0 ? -1 : at - (affinity.size() - tail.size());
    }
    String value = at >= 0 && at < tail.size() ? tail.get(at) : "";
    return NUMBER.matcher(value).matches() ? String.valueOf(Integer.parseInt(value)) : "-";
  }

  /** Connected components of the NV# links, as dash-joined groups of two or more, ordered by first card. */
  private static String groups(String[][] links) {
    int[] parent = new int[links.length];
    Arrays.setAll(parent, card -> card);
    for (int a = 0; a < links.length; a++) {
      for (int b = 0; b < links.length; b++) {
        if (links[a][b].startsWith("NV")) {
          parent[root(parent, a)] = root(parent, b);
        }
      }
    }
    TreeMap<Integer, TreeSet<Integer>> components = new TreeMap<>();
    for (int card = 0; card < links.length; card++) {
      components.computeIfAbsent(root(parent, card), root -> new TreeSet<>()).add(card);
    }
    return components.values().stream()
        .filter(group -> group.size() > 1)
        .sorted((x, y) -> Integer.compare(x.first(), y.first()))
        .map(group -> String.join("-", group.stream().map(String::valueOf).toList()))
        .reduce((x, y) -> x + "," + y)
        .orElse("");
  }

  private static int root(int[] parent, int card) {
    while (parent[card] != card) {
      card = parent[card];
    }
    return card;
  }

  private static boolean isHeader(List<String> words) {
    int at = words.indexOf("GPU0");
    return at >= 0 && (at + 1 == words.size() || !LINK.matcher(words.get(at + 1)).matches());
  }

  private static List<String> words(String line) {
    String trimmed = line.trim();
    return trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+"));
  }

  /** Tab-separated cells from the row label on, trimmed (the self cell is printed as " X "). */
  private static List<String> cells(String line) {
    List<String> cells = Arrays.stream(line.split("\t", -1)).map(String::trim).toList();
    int label = 0;
    while (label < cells.size() && cells.get(label).isEmpty()) {
      label++;
    }
    return cells.subList(label, cells.size());
  }

  private static ToolOutputException fail(String why) {
    return new ToolOutputException("nvidia-smi topo -m: " + why);
  }
}
