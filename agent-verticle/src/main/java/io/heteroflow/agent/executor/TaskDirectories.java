package io.heteroflow.agent.executor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A task's private directories: mode 0700, owned by the task's uid and gid when it has one (the agent, root, still
 * reads them). The shared parents ({@code <log dir>}, {@code <log dir>/logs}, {@code <log dir>/work}) are 0711 when
 * tasks run as other users: each task can pass through to its own directory but list nobody else's.
 */
final class TaskDirectories {
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
}
