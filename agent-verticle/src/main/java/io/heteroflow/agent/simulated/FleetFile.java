package io.heteroflow.agent.simulated;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Reads a fleet file ({@code nodes:} list) or a single node file into simulated nodes. A relative
 * {@code utilization_file} is resolved against the directory of the file that names it.
 */
public final class FleetFile {
  private FleetFile() {}

  @SuppressWarnings("unchecked")
  public static List<SimulatedNode> read(Path file) throws IOException {
    Object document;
    try (Reader reader = Files.newBufferedReader(file)) {
      document = new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
    }
    if (!(document instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException(file + ": expected a YAML mapping");
    }
    List<Map<String, Object>> entries = map.containsKey("nodes")
        ? (List<Map<String, Object>>) map.get("nodes") : List.of((Map<String, Object>) map);
    List<SimulatedNode> nodes = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Map<String, Object> entry : entries) {
      SimulatedNode node = SimulatedNode.fromMap(entry);
      if (node.utilizationFile() != null && !node.utilizationFile().isAbsolute()) {
        Path directory = file.toAbsolutePath().getParent();
        node = node.withUtilizationFile(directory.resolve(node.utilizationFile()));
      }
      if (!ids.add(node.id())) {
        throw new IllegalArgumentException(file + ": node id '" + node.id() + "' appears twice");
      }
      nodes.add(node);
    }
    return nodes;
  }
}
