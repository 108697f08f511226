package io.heteroflow.agent.executor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A task's processes as one POSIX process group. The task starts through {@code setsid}, which (not being a
 * group leader when Java spawns it) does not fork: it makes a new session and process group whose id is the
 * pid Java sees, then execs the command. Everything the task starts stays in that group unless it leaves on
 * purpose (its own {@code setsid}), also after the main process has exited and its children were reparented.
 * Signals go to the whole group ({@code kill -s SIG -- -PGID}, through {@code sh}'s built-in kill); the group
 * counts as alive while it has a member that is not a zombie ({@code /proc}). Without {@code setsid} (not
 * Linux) a task runs as a plain child and only it and its live descendants are signalled.
 */
final class ProcessGroup {
  static final Optional<Path> SETSID = Stream.of("/usr/bin/setsid", "/bin/setsid").map(Path::of)
      .filter(Files::isExecutable).findFirst();
  private static final Path PROC = Path.of("/proc");
  private static final Duration POLL = Duration.ofMillis(50);

  private ProcessGroup() {}

  /** The command line that starts {@code command} as the leader of a new process group. */
  static List<String> leading(Path program, List<String> command) {
    List<String> line = new ArrayList<>();
    SETSID.ifPresent(setsid -> line.add(setsid.toString()));
    line.add(program.toString());
    line.addAll(command.subList(1, command.size()));
    return line;
  }

  /**
   * The executable a command's first word names: a path as given, otherwise the first match on
   * {@code path} (the task's PATH; {@code /usr/bin:/bin} when it has none); empty when there is none.
   */
  static Optional<Path> resolve(String program, String path) {
    if (program.contains("/")) {
      Path given = Path.of(program);
      return Files.isRegularFile(given) && Files.isExecutable(given) ? Optional.of(given) : Optional.empty();
    }
    for (String dir : (path == null || path.isEmpty() ? "/usr/bin:/bin" : path).split(":")) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /**
   * Stops the group of {@code leader}: SIGTERM to every member, up to {@code grace} for the group to empty,
   * then SIGKILL to whatever is left; returns once nothing but zombies remains (or after 5 s more).
   */
  static void terminate(Process leader, Duration grace) throws InterruptedException {
    if (SETSID.isEmpty()) {
      terminateTree(leader, grace);
      return;
    }
    long group = leader.pid();
    List<ProcessHandle> tree = leader.descendants().toList();
    signal(group, "TERM");
    if (!awaitEmpty(group, leader, grace)) {
      signal(group, "KILL");
      awaitEmpty(group, leader, Duration.ofSeconds(5));
    }
    // a descendant that left the group on purpose (its own setsid) is still ended with it
    tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  /** SIGKILL to the whole group at once, without waiting (the agent is shutting down). */
  static void kill(Process leader) {
    leader.descendants().forEach(ProcessHandle::destroyForcibly);
    if (SETSID.isPresent()) {
      signal(leader.pid(), "KILL");
    }
    leader.destroyForcibly();
  }

  /** At the end of a task whose main process exited: the rest of its group is stopped the same way. */
  static void endRest(Process leader, Duration grace) throws InterruptedException {
    if (SETSID.isPresent() && alive(leader.pid(), leader)) {
      terminate(leader, grace);
    }
  }

  /** True when the group has a member that is not a zombie (the leader counts while Java has not reaped it). */
  static boolean alive(long group, Process leader) {
    if (leader.isAlive()) {
      return true;
    }
    if (!Files.isDirectory(PROC)) {
      return signal(group, "0");
    }
    try (Stream<Path> entries = Files.list(PROC)) {
      return entries.filter(entry -> entry.getFileName().toString().chars().allMatch(Character::isDigit))
          .anyMatch(entry -> liveMemberOf(entry.resolve("stat"), group));
    } catch (IOException e) {
      return signal(group, "0");
    }
  }

  /** {@code /proc/PID/stat}: "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses. */
  private static boolean liveMemberOf(Path stat, long group) {
    try {
      String line = Files.readString(stat);
      String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(fields[2]) == group && !fields[0].equals("Z") && !fields[0].equals("X");
    } catch (IOException | RuntimeException e) {
      return false; // the process ended while we looked
    }
  }

  private static boolean awaitEmpty(long group, Process leader, Duration limit) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (alive(group, leader)) {
      if (System.nanoTime() >= deadline) {
        return false;
      }
      leader.waitFor(POLL.toMillis(), TimeUnit.MILLISECONDS);
    }
    return true;
  }

  /**
   * {@code signal} (a name such as {@code USR1}) to every member of {@code leader}'s group; without process
   * groups, to the process alone. True when some process received it.
   */
  static boolean send(Process leader, String signal) {
    return kill(SETSID.isPresent() ? "-" + leader.pid() : String.valueOf(leader.pid()), signal);
  }

  /** {@code kill -s SIG -- -group} through sh's built-in; true when some member received it. */
  private static boolean signal(long group, String signal) {
    return kill("-" + group, signal);
  }

  private static boolean kill(String target, String signal) {
    try {
      Process kill = new ProcessBuilder("/bin/sh", "-c", "kill -s " + signal + " -- " + target + " 2>/dev/null")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
        return false;
      }
      return kill.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Without process groups: SIGTERM to the process, the grace, then SIGKILL to it and its live descendants. */
  private static void terminateTree(Process process, Duration grace) throws InterruptedException {
    List<ProcessHandle> tree = process.descendants().toList();
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
    }
    tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }
}
