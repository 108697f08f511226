#!/usr/bin/env python3
"""Median and range over several `bench --json` files, per scenario (the README's benchmark tables).

usage: scripts/bench/summarise.py docs/bench/RUN1.json docs/bench/RUN2.json docs/bench/RUN3.json
Each file holds one object per scenario (what `bench --json FILE` writes). Prints, per scenario and figure,
"median [min–max] (n runs)" and a Markdown row for the README.
"""
import json
import statistics
import sys

FIGURES = [
    ("drain_seconds", "drain s"),
    ("bound_per_s", "bound/s"),
    ("p50_ms", "burst create→scheduled p50 ms"),
    ("p99_ms", "burst create→scheduled p99 ms"),
    ("round_p50_ms", "round p50 ms"),
    ("round_p99_ms", "round p99 ms"),
    ("bind_conflicts", "conflicts"),
    ("jvm_cpu_seconds", "JVM CPU s"),
    ("pg_cpu_seconds", "PG CPU s"),
    ("other_processes_cpu_seconds", "other processes' CPU s"),
    ("pg_bind_tx_per_s_1", "PG bind tx/s, 1 client"),
    ("pg_bind_tx_per_s_16", "PG bind tx/s, 16 clients"),
    ("ratio_to_pg_1", "bound/s ÷ PG 1"),
    ("ratio_to_pg_16", "bound/s ÷ PG 16"),
    ("half_load.achieved_rate_per_s", "half-load arrivals/s"),
    ("half_load.p50_ms", "half-load submit→scheduled p50 ms"),
    ("half_load.p99_ms", "half-load submit→scheduled p99 ms"),
    ("half_load.create_answer_p50_ms", "half-load create answered p50 ms"),
    ("half_load.create_answer_p99_ms", "half-load create answered p99 ms"),
    ("phases.decide_loaded_cluster.mean_us", "decide µs/task (loaded)"),
]


def lookup(obj, dotted):
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def fmt(value):
    if float(value).is_integer() and abs(value) < 100:
        return f"{value:.0f}"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def main(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            for scenario in json.load(f):
                runs.setdefault(scenario["scenario"], []).append((path, scenario))
    for name, entries in runs.items():
        print(f"## {name}: {len(entries)} run(s): " + ", ".join(f"{p} ({s.get('date')})" for p, s in entries))
        for key, label in FIGURES:
            values = [v for v in (lookup(s, key) for _, s in entries) if isinstance(v, (int, float))]
            if values:
                print(f"  {label:40s} {fmt(statistics.median(values))} [{fmt(min(values))}–{fmt(max(values))}]"
                      f" ({len(values)} runs)")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
