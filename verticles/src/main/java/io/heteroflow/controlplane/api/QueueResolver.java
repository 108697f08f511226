package io.heteroflow.controlplane.api;

import io.heteroflow.controlplane.store.QueueRecord;
import io.heteroflow.controlplane.store.QueueStore;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which queue a submission goes to (SPEC §13). A tenant may submit to the queues that list it; one that no queue
 * lists submits to {@code root}. A submission that names no queue goes to the tenant's default queue: the first
 * queue created that lists it, else root; the admin's to root. The queue's cap on cards per task (and its
 * ancestors') is checked here: such a task could never start there.
 */
final class QueueResolver {
  private QueueResolver() {}

  static Set<String> usable(List<QueueRecord> queues, Principal principal) {
    Set<String> usable = new LinkedHashSet<>();
    for (QueueRecord queue : queues) {
      if (principal.admin() || queue.tenants().contains(principal.tenant())) {
        usable.add(queue.name());
      }
    }
    if (usable.isEmpty()) {
      usable.add(QueueRecord.ROOT);
    }
    return usable;
  }

  /** The queue for a submission naming {@code requested} (null: the default) that asks for {@code cards} cards. */
  static String resolve(List<QueueRecord> queues, Principal principal, String requested, int cards) {
    Set<String> usable = usable(queues, principal);
    String name = requested != null ? requested : principal.admin() ? QueueRecord.ROOT : usable.iterator().next();
    QueueRecord queue = queues.stream().filter(each -> each.name().equals(name)).findFirst()
        .orElseThrow(() -> ApiError.badField("queue", "no queue named '" + StrictJson.printable(name) + "'"));
    if (!usable.contains(name)) {
      throw ApiError.badField("queue", "tenant '" + principal.tenant() + "' may not submit to queue '" + name
          + "' (it may use: " + String.join(", ", usable) + ")");
    }
    for (QueueRecord up = queue; up != null; up = parentOf(up, queues)) {
      if (up.maxCardsPerTask() != null && cards > up.maxCardsPerTask()) {
        throw ApiError.badField("gpu_required", "queue '" + up.name() + "' takes at most " + up.maxCardsPerTask()
            + " cards per task (asked " + cards + ")");
      }
    }
    return name;
  }

  /** The use of {@code name} and every queue below it, added up. */
  static QueueStore.Usage subtree(String name, List<QueueRecord> queues, Map<String, QueueStore.Usage> own) {
    double gpuEq = 0;
    long active = 0;
    long pending = 0;
    long running = 0;
    for (QueueRecord queue : queues) {
      if (within(queue, name, queues)) {
        QueueStore.Usage use = own.getOrDefault(queue.name(), QueueStore.Usage.NONE);
        gpuEq += use.gpuEq();
        active += use.active();
        pending += use.pending();
        running += use.running();
      }
    }
    return new QueueStore.Usage(gpuEq, active, pending, running);
  }

  private static boolean within(QueueRecord queue, String ancestor, List<QueueRecord> queues) {
    for (QueueRecord up = queue; up != null; up = parentOf(up, queues)) {
      if (up.name().equals(ancestor)) {
        return true;
      }
    }
    return false;
  }

  private static QueueRecord parentOf(QueueRecord queue, List<QueueRecord> queues) {
    return queue.parent() == null ? null
        : queues.stream().filter(each -> each.name().equals(queue.parent())).findFirst().orElse(null);
  }
}
