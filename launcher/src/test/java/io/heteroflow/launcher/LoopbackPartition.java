package io.heteroflow.launcher;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A network partition between processes on one machine: each side has its own loopback address (added to lo as
 * a /32) and runs as its own user, and iptables drops every packet a side's user sends to the other side's
 * address. Traffic to 127.0.0.1 (PostgreSQL, the agents) is untouched. Needs root with CAP_NET_ADMIN.
 */
final class LoopbackPartition implements AutoCloseable {
  private final List<List<String>> rules = new ArrayList<>();
  private final List<String> addresses;

  LoopbackPartition(List<String> addresses) throws IOException, InterruptedException {
    this.addresses = addresses;
    for (String address : addresses) {
      run(false, "ip", "addr", "add", address + "/32", "dev", "lo");
    }
  }

  /** Whether this machine can make one (root, ip and iptables, and the right to change them). */
  static String unavailableBecause() {
    try {
      if (!"root".equals(System.getProperty("user.name"))) {
        return "not root";
      }
      Process check = new ProcessBuilder("iptables", "-L", "OUTPUT", "-n").redirectErrorStream(true).start();
      String out = new String(check.getInputStream().readAllBytes());
      return check.waitFor() == 0 ? null : "iptables -L failed: " + out;
    } catch (Exception e) {
      return "no iptables: " + e.getMessage();
    }
  }

  /** Drops everything user {@code uid} sends to {@code address}. */
  void cut(int uid, String address) throws IOException, InterruptedException {
    List<String> rule = List.of("OUTPUT", "-m", "owner", "--uid-owner", String.valueOf(uid), "-d", address, "-j",
        "DROP");
    List<String> insert = new ArrayList<>(List.of("iptables", "-I"));
    insert.addAll(rule);
    run(true, insert.toArray(String[]::new));
    rules.add(rule);
  }

  /** Removes every rule this partition added. */
  void heal() throws IOException, InterruptedException {
    for (List<String> rule : rules) {
      List<String> delete = new ArrayList<>(List.of("iptables", "-D"));
      delete.addAll(rule);
      run(false, delete.toArray(String[]::new));
    }
    rules.clear();
  }

  @Override
  public void close() throws IOException, InterruptedException {
    heal();
    for (String address : addresses) {
      run(false, "ip", "addr", "del", address + "/32", "dev", "lo");
    }
  }

  private static void run(boolean mustSucceed, String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes());
    if (process.waitFor() != 0 && mustSucceed) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
    }
  }
}
