package io.heteroflow.agent.executor;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.logging.Logger;

/**
 * A task's private directories: mode 0700, owned by the task's uid and gid when it has one (the agent, root, still
 * reads them). The shared parents ({@code <log dir>}, {@code <log dir>/logs}, {@code <log dir>/work}) are 0711 when
 * tasks run as other users: each task can pass through to its own directory but list nobody else's.
 */
final class TaskDirectories {
  private static final Logger LOG = Logger.getLogger(TaskDirectories.class.getName());

  private TaskDirectories() {}

  /** {@code <base>/<kind>/<name>}, private to {@code uid} (null: the agent's own user). */
  static Path owned(Path base, String kind, String name, Integer uid) throws IOException {
    Path parent = base.resolve(kind);
    Files.createDirectories(parent);
    if (uid != null) {
      mode(base, "rwx--x--x");
      mode(parent, "rwx--x--x");
    }
    return owned(parent.resolve(name), uid);
  }

  /** {@code dir}, created if need be, 0700 and owned by {@code uid} (null: left to the agent). */
  static Path owned(Path dir, Integer uid) throws IOException {
    Files.createDirectories(dir);
    mode(dir, "rwx------");
    if (uid != null) {
      Files.setAttribute(dir, "unix:uid", uid);
      Files.setAttribute(dir, "unix:gid", uid);
    }
    return dir;
  }

  private static void mode(Path dir, String permissions) throws IOException {
    try {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(permissions));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system: the directory keeps the default permissions
    }
  }

  /** Deletes a task's work directory; links are removed, never followed; what cannot be removed stays. */
  static void remove(Path root) {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
          dir.toFile().setReadable(true, true);
          dir.toFile().setWritable(true, true);
          dir.toFile().setExecutable(true, true);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) {
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
          Files.deleteIfExists(dir);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      LOG.warning("could not remove all of " + root + ": " + e.getMessage());
    }
  }

}
