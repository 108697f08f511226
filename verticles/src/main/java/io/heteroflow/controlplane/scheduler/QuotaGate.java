package io.heteroflow.controlplane.scheduler;

import io.heteroflow.controlplane.scheduler.framework.CardInfo;
import io.heteroflow.controlplane.scheduler.framework.Decision;
import io.heteroflow.controlplane.scheduler.framework.NodeInfo;
import io.heteroflow.controlplane.scheduler.framework.Snapshot;
import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import io.vertx.core.Future;
import io.heteroflow.controlplane.config.QueueingConfig;
import io.heteroflow.controlplane.scheduler.framework.QueueShares;
import io.heteroflow.controlplane.store.TaskRecord;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The round's view of the queues' quotas (SPEC §13), so a task that would take its queue over {@code max} (or
 * {@code max_running}) is not placed, and waits with {@code QuotaExceeded} and the numbers, instead of being bound
 * and refused. Read once per round — only when some queue has a limit — and staged as the round places tasks.
 * The bind re-checks against PostgreSQL under a lock of the limited queues ({@code QuotaCheck}): this only avoids
 * the wasted work. The same read gives the round its {@link QueueShares} (guarantees against use, for reclaim) and
 * the lenders a training task over its quota may borrow from ({@link Lending}). {@code POST /api/v1/tasks/explain}
 * asks a fresh one the same questions, so it answers with the scheduler's words.
 */
public final class QuotaGate {
  private final QueueStore queues;
  private final Lending lending;
  private Map<String, QueueRecord> byName = Map.of();
  private Map<String, Double> factors = Map.of();
  /** Per limited queue: its subtree's GPU-equivalents and active tasks, staged as the round places tasks. */
  private final Map<String, double[]> use = new HashMap<>();
  private QueueShares shares = QueueShares.NONE;

  public QuotaGate(QueueStore queues, QueueingConfig queueing, Clock clock) {
    this.queues = queues;
    this.lending = new Lending(queueing, clock);
  }

  public QuotaGate(QueueStore queues) {
    this(queues, QueueingConfig.DEFAULTS, Clock.systemUTC());
  }

  /** Brings the view up to date for a round: the limits, and the guarantees reclaim and training borrow use. */
  public Future<Void> read() {
    return queues.list().compose(this::read);
  }

  /** The same from a queue tree the caller has read (the round reads it once for every view of the queues). */
  public Future<Void> read(List<QueueRecord> tree) {
    Map<String, QueueRecord> named = new HashMap<>();
    tree.forEach(queue -> named.put(queue.name(), queue));
    byName = named;
    use.clear();
    shares = QueueShares.NONE;
    lending.clear();
    boolean guarantees = tree.stream().anyMatch(queue -> queue.parent() != null && queue.guaranteed() > 0);
    if (tree.stream().noneMatch(QueueRecord::limits) && !guarantees) {
      return Future.succeededFuture();
    }
    return Future.all(queues.usage(), queues.gpuEquivalents(), queues.borrowing()).map(all -> {
      Map<String, QueueStore.Usage> own = all.resultAt(0);
      factors = all.resultAt(1);
      tree.stream().filter(QueueRecord::limits).forEach(queue -> use.put(queue.name(), new double[2]));
      own.forEach((queue, usage) -> chain(queue, limited -> {
        use.get(limited.name())[0] += usage.gpuEq();
        use.get(limited.name())[1] += usage.active();
      }));
      Map<String, String> parents = new HashMap<>();
      Map<String, Double> guaranteed = new HashMap<>();
      Map<String, Double> charged = new HashMap<>();
      tree.forEach(queue -> {
        parents.put(queue.name(), queue.parent());
        guaranteed.put(queue.name(), queue.guaranteed());
      });
      own.forEach((queue, usage) -> charged.put(queue, usage.gpuEq()));
      shares = guarantees ? new QueueShares(parents, guaranteed, charged, factors) : QueueShares.NONE;
      if (!use.isEmpty() && guarantees) {
        lending.read(tree, shares, all.resultAt(2));
      }
      return null;
    }).mapEmpty();
  }

  /** The round's guarantees against use, for reclaim ({@link QueueShares#NONE} when no queue has a guarantee). */
  QueueShares shares() {
    return shares;
  }

  /** {@link #blocked(String, int)} for a task; a training task its own quota refuses may borrow instead. */
  String blocked(TaskRecord task) {
    String blocked = blocked(task.queue(), task.gpuRequired());
    if (blocked == null || !"training".equals(task.type()) || overRunning(task.queue(), 1) != null) {
      return blocked;
    }
    double cheapest = factors.values().stream().mapToDouble(Double::doubleValue).min().orElse(1.0);
    return lending.lender(task.queue(), task.gpuRequired() * Math.min(1.0, cheapest), this::related) == null
        ? blocked : null;
  }

  /**
   * {@link #admit(String, Decision, Snapshot)} for a task: a training task its own quota refuses for
   * GPU-equivalents is admitted on a lender's idle guarantee when one has room (staged there; the bind picks the
   * lender under lock).
   */
  String admit(TaskRecord task, Decision placed, Snapshot snapshot) {
    double need = need(placed, snapshot);
    String over = admit(task.queue(), need, 1);
    if (over == null || !"training".equals(task.type()) || overRunning(task.queue(), 1) != null) {
      return over;
    }
    String lender = lending.lender(task.queue(), need, this::related);
    if (lender == null) {
      return over;
    }
    lending.lend(lender, need);
    chain(task.queue(), limited -> use.get(limited.name())[1] += 1);
    return null;
  }

  /** Whether one of the two queues is the other or above it. */
  private boolean related(String a, String b) {
    for (QueueRecord up = byName.get(a); up != null; up = up.parent() == null ? null : byName.get(up.parent())) {
      if (up.name().equals(b)) {
        return true;
      }
    }
    for (QueueRecord up = byName.get(b); up != null; up = up.parent() == null ? null : byName.get(up.parent())) {
      if (up.name().equals(a)) {
        return true;
      }
    }
    return false;
  }

  private String overRunning(String queue, int tasks) {
    String[] why = new String[1];
    chain(queue, limited -> {
      if (why[0] == null && limited.maxRunning() != null && use.get(limited.name())[1] + tasks > limited.maxRunning()) {
        why[0] = "queue " + path(limited) + " runs at most " + limited.maxRunning() + " tasks";
      }
    });
    return why[0];
  }

  /** Why a task of {@code queue} needing at least {@code cards} cards cannot start now; null when it may try. */
  public String blocked(String queue, int cards) {
    if (use.isEmpty()) {
      return null;
    }
    double cheapest = factors.values().stream().mapToDouble(Double::doubleValue).min().orElse(1.0);
    return over(queue, cards * Math.min(1.0, cheapest), 1);
  }

  /** Admits a placement of {@code queue} (staged) or answers why its queue cannot take it. */
  public String admit(String queue, Decision placed, Snapshot snapshot) {
    return admit(queue, need(placed, snapshot), 1);
  }

  /** Admits {@code tasks} tasks of {@code queue} holding {@code gpuEq} together (a group's members), staged. */
  public String admit(String queue, double gpuEq, int tasks) {
    if (use.isEmpty()) {
      return null;
    }
    String over = over(queue, gpuEq, tasks);
    if (over == null) {
      chain(queue, limited -> {
        use.get(limited.name())[0] += gpuEq;
        use.get(limited.name())[1] += tasks;
      });
    }
    return over;
  }

  /** A card's GPU-equivalent factor: 1 for a model without one, or a card that reported no model. */
  private double factor(CardInfo card) {
    return card.model() == null ? 1.0 : factors.getOrDefault(card.model(), 1.0);
  }

  /** A placement in GPU-equivalents: each whole card its model's factor, a shard its memory's share of it. */
  public double need(Decision placed, Snapshot snapshot) {
    NodeInfo node = snapshot.node(placed.nodeId());
    double need = 0;
    for (CardInfo card : node == null ? List.<CardInfo>of() : node.cards()) {
      if (placed.gpuIndices().contains(card.index())) {
        need += factor(card);
      } else if (placed.shard() != null && placed.shard().cardIndex() == card.index()) {
        need += factor(card) * placed.shard().memoryMb()
            / (double) Math.max(1, card.memoryTotalMb());
      }
    }
    return need;
  }

  private String over(String queue, double gpuEq, int tasks) {
    String[] why = new String[1];
    chain(queue, limited -> {
      double[] used = use.get(limited.name());
      if (why[0] == null && limited.maxGpuEq() != null && used[0] + gpuEq > limited.maxGpuEq() + 1e-9) {
        why[0] = String.format(Locale.ROOT, "queue %s uses %.1f of %.1f GPU-eq; %s needs %.1f", path(limited),
            used[0], limited.maxGpuEq(), tasks == 1 ? "this task" : "this group", gpuEq);
      } else if (why[0] == null && limited.maxRunning() != null && used[1] + tasks > limited.maxRunning()) {
        why[0] = "queue " + path(limited) + " runs " + (long) used[1] + " of at most " + limited.maxRunning() + " tasks";
      }
    });
    return why[0];
  }

  /** Calls {@code each} for every limited queue from {@code queue} up to the root. */
  private void chain(String queue, java.util.function.Consumer<QueueRecord> each) {
    for (QueueRecord up = byName.get(queue); up != null; up = up.parent() == null ? null : byName.get(up.parent())) {
      if (use.containsKey(up.name())) {
        each.accept(up);
      }
    }
  }

  /** root/vision/detection. */
  private String path(QueueRecord queue) {
    StringBuilder path = new StringBuilder(queue.name());
    for (QueueRecord up = byName.get(queue.parent()); up != null; up = byName.get(up.parent())) {
      path.insert(0, up.name() + "/");
    }
    return path.toString();
  }
}
