package io.heteroflow.agent.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real host: runs vendor tools (10 s limit each, blocking: call from a worker thread) and reads files.
 * A tool that is not on the PATH is "absent"; one that exits non-zero or hangs is an unreadable answer.
 */
public final class LocalHostProbe implements HostProbe {
  private static final long TIMEOUT_SECONDS = 10;

  @Override
  public Optional<String> run(String... command) throws ToolOutputException {
    Process process;
    try {
      process = new ProcessBuilder(command).redirectErrorStream(false)
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException notInstalled) {
      return Optional.empty();
    }
    try (InputStream out = process.getInputStream()) {
      byte[] bytes = out.readAllBytes();
      if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new ToolOutputException(String.join(" ", command) + " did not finish in " + TIMEOUT_SECONDS + " s");
      }
      if (process.exitValue() != 0) {
        throw new ToolOutputException(String.join(" ", command) + " exited with " + process.exitValue());
      }
      return Optional.of(new String(bytes, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new ToolOutputException(String.join(" ", command) + ": " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new ToolOutputException(String.join(" ", command) + " was interrupted");
    }
  }

  @Override
  public Optional<String> readFile(String path) {
    try {
      return Optional.of(Files.readString(Path.of(path)));
    } catch (IOException | RuntimeException absent) {
      return Optional.empty();
    }
  }

  @Override
  public List<String> list(String directory) {
    try (Stream<Path> entries = Files.list(Path.of(directory))) {
      return entries.map(path -> path.getFileName().toString()).sorted().toList();
    } catch (IOException | RuntimeException absent) {
      return List.of();
    }
  }
}
