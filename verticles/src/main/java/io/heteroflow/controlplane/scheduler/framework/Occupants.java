package io.heteroflow.controlplane.scheduler.framework;

import io.heteroflow.protocol.TaskStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The active tasks on each node, for one round's preemption planning. They are not kept between rounds (a task
 * that starts running changes no node row, so nothing would tell the snapshot): a round reads them only when a
 * PostFilter plugin asked for them ({@link #want}) while deciding a task that found no node, then decides those
 * tasks again with them ({@link #fill}); the round ends with {@link #clear}.
 */
public final class Occupants {
  private Map<String, List<Occupant>> byNode;
  private Instant now;
  private QueueShares shares = QueueShares.NONE;
  private final Map<UUID, TaskRequest> wanted = new LinkedHashMap<>();
  /** The nodes each task group's members run on, among the occupants read. */
  private final Map<UUID, Set<String>> gangNodes = new HashMap<>();
  /** What plugins keep for the whole round (e.g. plans by task shape), by key; dropped with the occupants. */
  private final Map<CycleState.Key<?>, Object> roundMemos = new java.util.IdentityHashMap<>();

  /** Whether this round has read them. */
  public boolean read() {
    return byNode != null;
  }

  /** The round's time: the "now" of every plan made in it (protected runtime, wait threshold). */
  public Instant now() {
    return now;
  }

  /** A round begins at {@code roundTime}, nothing read yet. */
  public void begin(Instant roundTime) {
    begin(roundTime, QueueShares.NONE);
  }

  /** A round begins, with the queues' guarantees against their use (for reclaim). */
  public void begin(Instant roundTime, QueueShares queueShares) {
    clear();
    now = roundTime;
    shares = queueShares;
  }

  /** The round's queue shares ({@link QueueShares#NONE} when no queue has a guarantee). */
  public QueueShares shares() {
    return shares;
  }

  /** The active tasks on {@code nodeId} (empty when none, or not read). */
  public List<Occupant> on(String nodeId) {
    return byNode == null ? List.of() : byNode.getOrDefault(nodeId, List.of());
  }

  /** The occupants read whose task is among {@code ids}, on any node. */
  public List<Occupant> among(Set<UUID> ids) {
    List<Occupant> found = new ArrayList<>();
    if (byNode != null) {
      byNode.values().forEach(tasks -> tasks.stream().filter(task -> ids.contains(task.taskId())).forEach(found::add));
    }
    return found;
  }

  /** A PostFilter plugin needs them to plan for {@code task}: the round reads them and decides it again. */
  public void want(TaskRequest task) {
    wanted.putIfAbsent(task.id(), task);
  }

  public Collection<TaskRequest> wanted() {
    return List.copyOf(wanted.values());
  }

  public void fill(Map<String, List<Occupant>> occupants) {
    byNode = new LinkedHashMap<>(occupants);
    gangNodes.clear();
    occupants.forEach((node, tasks) -> tasks.stream().filter(task -> task.groupId() != null)
        .forEach(task -> gangNodes.computeIfAbsent(task.groupId(), k -> new LinkedHashSet<>()).add(node)));
  }

  /** Every active member of task group {@code groupId}, on any node, as the round read them. */
  public List<Occupant> gang(UUID groupId) {
    List<Occupant> members = new ArrayList<>();
    for (String node : gangNodes.getOrDefault(groupId, Set.of())) {
      on(node).stream().filter(task -> groupId.equals(task.groupId())).forEach(members::add);
    }
    return members;
  }

  /**
   * {@code victims} are being preempted for a plan on {@code nodeId} (members of a task group among them may run
   * elsewhere): no later plan of the round may count on them again. Answers the nodes whose occupants changed.
   */
  Set<String> preempting(String nodeId, Collection<UUID> victims) {
    Set<String> touched = new LinkedHashSet<>();
    if (byNode == null) {
      return touched;
    }
    Set<UUID> gone = new HashSet<>(victims);
    Set<String> nodes = new LinkedHashSet<>();
    nodes.add(nodeId);
    for (String node : byNode.keySet()) {
      if (byNode.get(node).stream().anyMatch(each -> each.groupId() != null && gone.contains(each.taskId()))) {
        nodes.add(node);
      }
    }
    for (String node : nodes) {
      if (!byNode.containsKey(node)) {
        continue;
      }
      List<Occupant> updated = new ArrayList<>();
      for (Occupant each : byNode.get(node)) {
        updated.add(gone.contains(each.taskId()) ? each.withStatus(TaskStatus.PREEMPTING) : each);
      }
      byNode.put(node, updated);
      touched.add(node);
    }
    return touched;
  }

  /**
   * A plugin's memo for this round (created on first use): valid as long as the occupants it was computed on,
   * so it is dropped with them.
   */
  @SuppressWarnings("unchecked")
  public <T> T roundMemo(CycleState.Key<T> key, java.util.function.Supplier<T> create) {
    return (T) roundMemos.computeIfAbsent(key, k -> create.get());
  }

  /** Forgets the round's reading, wishes and memos. */
  public void clear() {
    byNode = null;
    gangNodes.clear();
    wanted.clear();
    roundMemos.clear();
  }
}
