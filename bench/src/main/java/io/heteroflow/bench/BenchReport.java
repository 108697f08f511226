package io.heteroflow.bench;

import io.vertx.core.json.JsonObject;
import java.util.List;

/** The markdown tables {@code heteroflow bench} prints on stdout. */
final class BenchReport {
  private BenchReport() {}

  /** The preempt scenario's one row. */
  static String preemption(JsonObject result) {
    JsonObject latency = result.getJsonObject("preemptor_bind_ms");
    return "| nodes × cards | preemptors | all bound s | bind p50 / p99 / max ms | plans (preemptors) | victims"
        + " | victims per plan | plans over / under the minimal set | violations |\n|---|---|---|---|---|---|---|---|---|\n"
        + "| " + result.getInteger("nodes") + " × 8 | " + result.getInteger("preemptors") + " | "
        + result.getDouble("all_preemptors_bound_seconds") + " | " + latency.getDouble("p50") + " / "
        + latency.getDouble("p99") + " / " + latency.getDouble("max") + " | " + result.getLong("plans") + " ("
        + result.getLong("preemptors_that_planned") + ") | " + result.getLong("victims") + " | "
        + result.getDouble("victims_per_plan_mean") + " | " + result.getLong("plans_over_minimal") + " / "
        + result.getLong("plans_under_minimal") + " | " + result.getJsonArray("violations").size() + " |";
  }

  /** The gangs scenario's one row. */
  static String gangs(JsonObject result) {
    JsonObject latency = result.getJsonObject("group_submit_to_scheduled_ms");
    JsonObject decisions = result.getJsonObject("group_decision_ms", new JsonObject());
    JsonObject decide = result.getJsonObject("phases", new JsonObject()).getJsonObject("decide_groups_empty_cluster",
        new JsonObject());
    return "| nodes × cards | groups (members) + single tasks | groups bound | all groups bound s | groups/s"
        + " (median over waves) | tasks/s | group submit→scheduled p50 / p99 ms | decide ms per group: in the run p50 / p99, probe mean | watcher samples"
        + " | partial groups | violations |\n|---|---|---|---|---|---|---|---|---|---|---|\n"
        + "| " + result.getInteger("nodes") + " × 8 | " + result.getInteger("groups") + " (" + result.getInteger("members")
        + ") + " + result.getInteger("single_tasks") + " | " + result.getLong("groups_bound") + ending(result) + " | "
        + num(result, "all_groups_bound_seconds", 2) + " | " + num(result, "groups_per_s", 1) + " ("
        + num(result.getJsonObject("group_binds"), "per_s_median_over_waves", 1) + ") | " + num(result, "tasks_per_s", 0) + " | "
        + num(latency, "p50", 0) + " / " + num(latency, "p99", 0) + " | " + num(decisions, "p50", 1) + " / "
        + num(decisions, "p99", 1) + ", " + (decide.getValue("mean_us") instanceof Number mean
        ? String.format("%.1f", mean.doubleValue() / 1000) : "–") + " | "
        + result.getJsonObject("watch").getInteger("samples") + " | " + result.getInteger("partial_groups_seen")
        + " | " + result.getJsonArray("violations").size() + " |";
  }

  static String markdown(List<JsonObject> results) {
    StringBuilder out = new StringBuilder();
    out.append("| scenario | nodes × cards | tasks | bound | drain s | bound/s | create→scheduled p50 / p99 ms"
        + " | round p50 / p99 ms | rounds | bind conflicts | JVM CPU s | PG CPU s | peak RSS MiB"
        + " | PG bind tx/s 1 / 16 clients | bound/s ÷ PG 1 / 16 | other processes' CPU s |\n");
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (JsonObject r : results) {
      out.append("| ").append(r.getString("scenario"))
          .append(" | ").append(r.getInteger("nodes")).append(" × ").append(r.getInteger("cards") / r.getInteger("nodes"))
          .append(" | ").append(r.getInteger("tasks"))
          .append(" | ").append(r.getLong("bound")).append(ending(r))
          .append(" | ").append(num(r, "drain_seconds", 2))
          .append(" | ").append(num(r, "bound_per_s", 0))
          .append(" | ").append(num(r, "p50_ms", 0)).append(" / ").append(num(r, "p99_ms", 0))
          .append(" | ").append(num(r, "round_p50_ms", 0)).append(" / ").append(num(r, "round_p99_ms", 0))
          .append(" | ").append(r.getValue("rounds"))
          .append(" | ").append(r.getValue("bind_conflicts"))
          .append(" | ").append(num(r, "jvm_cpu_seconds", 1))
          .append(" | ").append(num(r, "pg_cpu_seconds", 1))
          .append(" | ").append(num(r, "peak_rss_mb", 0))
          .append(" | ").append(num(r, "pg_bind_tx_per_s_1", 0)).append(" / ").append(num(r, "pg_bind_tx_per_s_16", 0))
          .append(" | ").append(num(r, "ratio_to_pg_1", 3)).append(" / ").append(num(r, "ratio_to_pg_16", 3))
          .append(" | ").append(num(r, "other_processes_cpu_seconds", 1))
          .append(" |\n");
    }
    boolean halfLoad = results.stream().anyMatch(r -> r.getJsonObject("half_load") != null);
    if (halfLoad) {
      out.append("\nHalf load (before the burst: tasks created one by one, as the API does, at half the warm rate):\n\n");
      out.append("| scenario | target / achieved arrivals per s | tasks | bound | submit→scheduled p50 / p99 / max ms"
          + " | create answered p50 / p99 ms |\n");
      out.append("|---|---|---|---|---|---|\n");
      for (JsonObject r : results) {
        JsonObject h = r.getJsonObject("half_load");
        if (h == null) {
          continue;
        }
        out.append("| ").append(r.getString("scenario"))
            .append(" | ").append(num(h, "target_rate_per_s", 0)).append(" / ").append(num(h, "achieved_rate_per_s", 0))
            .append(" | ").append(h.getValue("tasks"))
            .append(" | ").append(h.getValue("bound")).append(ending(h))
            .append(" | ").append(num(h, "p50_ms", 1)).append(" / ").append(num(h, "p99_ms", 1)).append(" / ")
            .append(num(h, "max_ms", 1))
            .append(" | ").append(num(h, "create_answer_p50_ms", 1)).append(" / ").append(num(h, "create_answer_p99_ms", 1))
            .append(" |\n");
      }
    }
    boolean phases = results.stream().anyMatch(r -> r.getJsonObject("phases") != null);
    if (phases) {
      out.append("\nWhere a round's time goes (probes on the same control plane, after the drain):\n\n");
      out.append("| scenario | bind interval p50 / p90 ms | snapshot read ms | pending read ms"
          + " | decide µs mean, empty / loaded | bind via bus, 1 in flight: p50 ms, /s | bind direct, 1 in flight: /s"
          + " | bind via bus, 16 in flight: /s | bind vs raw 2-row tx, interleaved: p50 ms"
          + " | PG tx per bound task | machine busy % |\n");
      out.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (JsonObject r : results) {
        JsonObject p = r.getJsonObject("phases", new JsonObject());
        JsonObject interval = r.getJsonObject("bind_interval_ms", new JsonObject());
        out.append("| ").append(r.getString("scenario"))
            .append(" | ").append(num(interval, "p50", 2)).append(" / ").append(num(interval, "p90", 2))
            .append(" | ").append(num(p, "snapshot_read_ms", 1))
            .append(" | ").append(num(p, "pending_batch_read_ms", 1))
            .append(" | ").append(num(p.getJsonObject("decide_empty_cluster", new JsonObject()), "mean_us", 0))
            .append(" / ").append(num(p.getJsonObject("decide_loaded_cluster", new JsonObject()), "mean_us", 0))
            .append(" | ").append(bind(p, "bind_via_bus_1_in_flight", true))
            .append(" | ").append(bind(p, "bind_direct_1_in_flight", false))
            .append(" | ").append(bind(p, "bind_via_bus_16_in_flight", false))
            .append(" | ").append(interleaved(p))
            .append(" | ").append(num(r, "pg_transactions_per_bound_task", 2))
            .append(" | ").append(num(r, "machine_busy_percent", 0))
            .append(" |\n");
      }
    }
    return out.toString();
  }

  private static String ending(JsonObject r) {
    String ending = r.getString("ending", "drained");
    return ending.equals("drained") ? "" : " (" + ending + ")";
  }

  private static String interleaved(JsonObject phases) {
    JsonObject pair = phases.getJsonObject("interleaved_bind_vs_raw_tx");
    if (pair == null) {
      return "–";
    }
    return num(pair.getJsonObject("bind_direct"), "p50_ms", 2) + " vs "
        + num(pair.getJsonObject("raw_two_row_tx"), "p50_ms", 2);
  }

  private static String bind(JsonObject phases, String key, boolean withLatency) {
    Object value = phases.getValue(key);
    if (!(value instanceof JsonObject run)) {
      return value == null ? "–" : String.valueOf(value);
    }
    return (withLatency ? num(run, "p50_ms", 2) + ", " : "") + num(run, "per_s", 0);
  }

  private static String num(JsonObject object, String key, int decimals) {
    Object value = object.getValue(key);
    if (!(value instanceof Number number)) {
      return "–";
    }
    return String.format("%." + decimals + "f", number.doubleValue());
  }
}
