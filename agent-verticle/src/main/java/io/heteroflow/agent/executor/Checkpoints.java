package io.heteroflow.agent.executor;

import io.heteroflow.protocol.message.Checkpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * The checkpoint handshake before a graceful stop: the task's declared signal to its process group, then up to
 * the declared timeout for the task to write (or touch) the file named by {@value #FILE_VARIABLE}; the stop's
 * SIGTERM follows either way. The file's time is what the agent reports as {@code last_checkpoint_at}.
 */
final class Checkpoints {
  /** The variable that names the task's checkpoint file (in its private work directory). */
  static final String FILE_VARIABLE = "HETEROFLOW_CHECKPOINT_FILE";
  private static final long POLL_MS = 50;

  private Checkpoints() {}

  /**
   * Asks {@code process}'s group to checkpoint and waits until {@code file} is written after the request, the
   * timeout passes, or the process ends; does nothing without a handshake.
   */
  static void handshake(Process process, Checkpoint checkpoint, Path file) throws InterruptedException {
    if (checkpoint == null || file == null || process == null || !process.isAlive()) {
      return;
    }
    FileTime before = modified(file);
    if (!ProcessGroup.send(process, checkpoint.signal().substring("SIG".length()))) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(checkpoint.timeoutSeconds());
    while (System.nanoTime() < deadline && process.isAlive()) {
      FileTime now = modified(file);
      if (now != null && !now.equals(before)) {
        return;
      }
      process.waitFor(POLL_MS, TimeUnit.MILLISECONDS);
    }
  }

  /** When the task last wrote its checkpoint file, or null (no file, or no handshake). */
  static Instant writtenAt(Path file) {
    FileTime time = file == null ? null : modified(file);
    return time == null ? null : time.toInstant();
  }

  private static FileTime modified(Path file) {
    try {
      return Files.exists(file) ? Files.getLastModifiedTime(file) : null;
    } catch (IOException e) {
      return null;
    }
  }
}
