package io.heteroflow.agent.executor;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.logging.Logger;

/**
 * Which unprivileged uid runs a tenant's tasks on this agent: one uid per tenant from a configured range
 * ({@code --task-uids 20000-29999}); its gid is the same number. A new tenant gets the uid its name hashes to,
 * or the next free one after it (wrapping around the range); the choice is written to {@code task-uids.properties}
 * in the agent's data directory, so a tenant keeps its uid across agent restarts. No passwd entry is needed:
 * tasks start under {@code setpriv --reuid U --regid U --clear-groups}. An agent that is not root cannot switch
 * users: it runs every task as itself and says so once, as a WARNING.
 */
public final class TaskUsers {
  private static final Logger LOG = Logger.getLogger(TaskUsers.class.getName());
  /** Where a tenant-less run (a control plane from before tenants were sent) is placed. */
  public static final String DEFAULT_TENANT = "default";
  public static final String DEFAULT_RANGE = "20000-29999";
  static final String FILE = "task-uids.properties";

  private final int first;
  private final int last;
  private final Path file;
  private final boolean switching;
  private final Map<String, Integer> byTenant = new HashMap<>();
  private final Map<Integer, String> byUid = new HashMap<>();
  private boolean warned;

  private TaskUsers(int first, int last, Path file, boolean switching) {
    this.first = first;
    this.last = last;
    this.file = file;
    this.switching = switching;
  }

  /** No user switching at all: every task runs as the agent (simulated fleets, tools). */
  public static TaskUsers none() {
    return new TaskUsers(0, -1, null, false);
  }

  /** Users from {@code range} ("FIRST-LAST"), remembered in {@code dataDir}; switching only when the agent is root. */
  public static TaskUsers of(String range, Path dataDir) throws IOException {
    String[] bounds = range.strip().split("-");
    int first;
    int last;
    try {
      first = Integer.parseInt(bounds[0].strip());
      last = bounds.length == 2 ? Integer.parseInt(bounds[1].strip()) : -1;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--task-uids: FIRST-LAST expected, got " + range);
    }
    if (bounds.length != 2 || first < 1000 || last < first) {
      throw new IllegalArgumentException("--task-uids: FIRST-LAST with 1000 <= FIRST <= LAST expected, got " + range);
    }
    TaskUsers users = new TaskUsers(first, last, dataDir.resolve(FILE), agentUid() == 0);
    users.load();
    return users;
  }

  /** The agent's own uid (Linux). */
  public static int agentUid() {
    try {
      return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return -1;
    }
  }

  /** Whether tasks run as their tenant's uid (the agent is root and a range is set). */
  public boolean switching() {
    return switching;
  }

  /**
   * The uid to run a task of {@code tenant} as, or null to run it as the agent (warned about once when a range
   * is configured but the agent is not root).
   */
  public synchronized Integer uidFor(String tenant) throws IOException {
    if (!switching) {
      if (file != null && !warned) {
        warned = true;
        LOG.warning("the agent is not root (uid " + agentUid() + "): tasks run as the agent's own user, "
            + "not as one user per tenant from " + first + "-" + last);
      }
      return null;
    }
    return mappedUid(tenant);
  }

  /** The tenant's uid from the range whether or not this agent can switch to it (a container's user); null: no range. */
  public synchronized Integer mappedUid(String tenant) throws IOException {
    if (file == null) {
      return null;
    }
    String name = tenant == null || tenant.isBlank() ? DEFAULT_TENANT : tenant;
    Integer known = byTenant.get(name);
    if (known != null) {
      return known;
    }
    int size = last - first + 1;
    int start = Math.floorMod(name.hashCode(), size);
    for (int i = 0; i < size; i++) {
      int uid = first + (start + i) % size;
      if (!byUid.containsKey(uid)) {
        byTenant.put(name, uid);
        byUid.put(uid, name);
        save();
        return uid;
      }
    }
    throw new IOException("no free task uid left in " + first + "-" + last + " for tenant " + name);
  }

  private void load() throws IOException {
    if (!Files.exists(file)) {
      return;
    }
    Properties stored = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      stored.load(in);
    }
    stored.forEach((tenant, uid) -> {
      int value = Integer.parseInt(uid.toString());
      if (value >= first && value <= last) {
        byTenant.put(tenant.toString(), value);
        byUid.put(value, tenant.toString());
      }
    });
  }

  /** Written to a temporary file, then renamed: a crash never leaves half a mapping. */
  private void save() throws IOException {
    Files.createDirectories(file.getParent());
    Properties stored = new Properties();
    new TreeMap<>(byTenant).forEach((tenant, uid) -> stored.setProperty(tenant, String.valueOf(uid)));
    Path temporary = file.resolveSibling(FILE + ".tmp");
    try (Writer out = Files.newBufferedWriter(temporary, StandardCharsets.UTF_8)) {
      stored.store(out, "tenant = uid of its tasks on this agent (heteroflow agent --task-uids)");
    }
    Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
