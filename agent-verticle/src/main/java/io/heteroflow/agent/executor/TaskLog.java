package io.heteroflow.agent.executor;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * One task's combined stdout and stderr, bounded: a ring of two files in the task's log directory,
 * {@code output.log} (written) and {@code output.log.1} (the half before it). When the written file reaches half
 * the cap, the older half is deleted (its size added to {@code dropped}) and the written one becomes the older, so
 * at most {@code cap} bytes are kept: always the newest ones. Offsets are byte positions since the task's first
 * byte; the kept range is {@code [dropped, end)}.
 */
public final class TaskLog {
  static final String CURRENT = "output.log";
  static final String PREVIOUS = "output.log.1";
  static final String DROPPED = "dropped";

  /** A range of a task's log: its bytes from {@code offset}, the log's end when read, bytes dropped so far, the cap. */
  public record Chunk(boolean found, long offset, byte[] bytes, long end, long dropped, long capBytes) {
    public static Chunk none(long capBytes) {
      return new Chunk(false, 0, new byte[0], 0, 0, capBytes);
    }

    public String text() {
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }

  private final Path dir;
  private final long capBytes;
  private OutputStream out;
  private long currentSize;
  private long dropped;

  private TaskLog(Path dir, long capBytes) {
    this.dir = dir;
    this.capBytes = capBytes;
  }

  /** A log to append to (the directory exists; what it holds from an earlier run is kept and counted). */
  static TaskLog create(Path dir, long capBytes) throws IOException {
    TaskLog log = new TaskLog(dir, capBytes);
    log.dropped = readDropped(dir);
    log.currentSize = size(dir.resolve(CURRENT));
    log.out = Files.newOutputStream(dir.resolve(CURRENT), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    return log;
  }

  /** Copies {@code in} into the log until it ends (the process's output pipe: EOF when the whole group is gone). */
  void pump(InputStream in) {
    byte[] buffer = new byte[64 * 1024];
    try (in) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        append(buffer, n);
      }
    } catch (IOException e) {
      // the pipe was closed under us (the agent is giving up on a task whose descendants keep it open)
    } finally {
      close();
    }
  }

  synchronized void append(byte[] bytes, int length) throws IOException {
    long half = Math.max(1, capBytes / 2);
    int from = 0;
    while (from < length) {
      int n = (int) Math.min(length - from, half - currentSize);
      out.write(bytes, from, n);
      currentSize += n;
      from += n;
      if (currentSize >= half) {
        rotate();
      }
    }
  }

  private void rotate() throws IOException {
    out.close();
    Path previous = dir.resolve(PREVIOUS);
    dropped += size(previous);
    Files.writeString(dir.resolve(DROPPED), Long.toString(dropped));
    Files.move(dir.resolve(CURRENT), previous, StandardCopyOption.REPLACE_EXISTING);
    out = Files.newOutputStream(dir.resolve(CURRENT), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    currentSize = 0;
  }

  synchronized void close() {
    try {
      out.close();
    } catch (IOException e) {
      // nothing more will be written
    }
  }

  /** Reads a range under this log's lock (a running task's log may rotate meanwhile). */
  synchronized Chunk read(Long offset, int maxBytes, Long tailBytes) {
    return read(dir, capBytes, offset, maxBytes, tailBytes);
  }

  /**
   * Up to {@code maxBytes} from {@code offset} (clamped into the kept range), or from {@code tailBytes} before the
   * end, or from the first kept byte; not found when the directory does not exist.
   */
  static Chunk read(Path dir, long capBytes, Long offset, int maxBytes, Long tailBytes) {
    if (!Files.isDirectory(dir)) {
      return Chunk.none(capBytes);
    }
    try {
      long dropped = readDropped(dir);
      long previous = size(dir.resolve(PREVIOUS));
      long end = dropped + previous + size(dir.resolve(CURRENT));
      long from = tailBytes != null ? end - tailBytes : offset != null ? offset : dropped;
      from = Math.min(end, Math.max(dropped, from));
      int length = (int) Math.min(maxBytes, end - from);
      byte[] bytes = new byte[length];
      int filled = 0;
      long inPrevious = from - dropped;
      if (inPrevious < previous) {
        filled = readAt(dir.resolve(PREVIOUS), inPrevious, bytes, 0, (int) Math.min(length, previous - inPrevious));
      }
      if (filled < length) {
        filled += readAt(dir.resolve(CURRENT), Math.max(0, inPrevious - previous), bytes, filled, length - filled);
      }
      byte[] read = filled == length ? bytes : java.util.Arrays.copyOf(bytes, filled);
      return new Chunk(true, from, read, end, dropped, capBytes);
    } catch (IOException e) {
      return Chunk.none(capBytes);
    }
  }

  private static int readAt(Path file, long position, byte[] into, int at, int length) throws IOException {
    if (!Files.exists(file) || length <= 0) {
      return 0;
    }
    try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
      in.seek(position);
      int total = 0;
      while (total < length) {
        int n = in.read(into, at + total, length - total);
        if (n < 0) {
          break;
        }
        total += n;
      }
      return total;
    }
  }

  private static long readDropped(Path dir) throws IOException {
    Path file = dir.resolve(DROPPED);
    return Files.exists(file) ? Long.parseLong(Files.readString(file).strip()) : 0;
  }

  private static long size(Path file) throws IOException {
    return Files.exists(file) ? Files.size(file) : 0;
  }
}
