package io.heteroflow.agent.gpu;

import java.util.List;
import java.util.Optional;

/**
 * What detectors may ask of the host: run a tool, read a file, list a directory. The agent uses the real host
 * ({@link LocalHostProbe}); tests use recorded real output.
 */
public interface HostProbe {
  /** The standard output of the command; empty when the tool is not installed (the vendor is absent). */
  Optional<String> run(String... command) throws ToolOutputException;

  /** The content of a file; empty when it does not exist. */
  Optional<String> readFile(String path);

  /** The names in a directory; empty when it does not exist. */
  List<String> list(String directory);
}
