package io.heteroflow.agent.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A host made of recorded real output: commands (joined by single spaces) map to the text they printed, paths
 * to file contents, directories to their entries. Anything not recorded is absent, like a missing tool.
 */
public final class RecordedHost implements HostProbe {
  private final Map<String, String> commands = new HashMap<>();
  private final Map<String, String> files = new HashMap<>();
  private final Map<String, List<String>> directories = new HashMap<>();
  private final List<String> ran = new ArrayList<>();

  /** The content of a test resource under samples/, e.g. {@code sample("nvidia/query-gpu-p100.csv")}. */
  public static String sample(String path) {
    try (InputStream in = RecordedHost.class.getClassLoader().getResourceAsStream("samples/" + path)) {
      if (in == null) {
        throw new IllegalArgumentException("no sample samples/" + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public RecordedHost command(String command, String output) {
    commands.put(command, output);
    return this;
  }

  public RecordedHost file(String path, String content) {
    files.put(path, content);
    return this;
  }

  public RecordedHost directory(String path, String... entries) {
    directories.put(path, List.of(entries));
    return this;
  }

  /** The commands detectors ran, in order (to check flags). */
  public List<String> ran() {
    return ran;
  }

  @Override
  public Optional<String> run(String... command) {
    String line = String.join(" ", command);
    ran.add(line);
    return Optional.ofNullable(commands.get(line));
  }

  @Override
  public Optional<String> readFile(String path) {
    return Optional.ofNullable(files.get(path));
  }

  @Override
  public List<String> list(String directory) {
    return directories.getOrDefault(directory, List.of());
  }
}
