#!/usr/bin/env python3
"""The agent-fleet benchmark: N simulated agents over the agent bridge against two control planes (real jars).

usage: scripts/bench/agent-fleet.py [--count 5000] [--tasks 2000] [--json FILE] [--jar launcher/target/heteroflow.jar]
       scripts/bench/agent-fleet.py --summarise RUN1.json RUN2.json RUN3.json   (median [min-max] of each figure)

It starts the embedded PostgreSQL (`heteroflow postgres`), two `server`s (Hazelcast members, each serving the agent
bridge on loopback, certificates from `heteroflow certs`) and one `agent --simulate-fleet conf/fleet-dev.yaml --count N`
JVM, then measures, with /proc and psql:
  * idle: each control plane's CPU and RSS before any agent connects (the baseline);
  * fleet: the time until all N nodes are online; then over a 60 s window of steady heartbeats (every 2 s) each control
    plane's CPU (% of one core) and RSS, less the baseline; the heartbeats written per second (N/2 expected) and their
    write time p50/p99 over the window (registry receipt -> commit in PostgreSQL, from heteroflow_heartbeat_write);
    PostgreSQL's and the fleet JVM's CPU; each control plane's live heap after a full GC (jcmd GC.heap_info);
  * throughput: --tasks one-card `sleep 1` tasks submitted at once, claimed and run by the agents; tasks/s from the first
    creation to the last end (PostgreSQL's clock), and how many failed with which reason;
  * failover: kill -9 of the control plane with more agents; seconds until the survivor holds all N connections and
    all N nodes are online, and the fewest nodes online at any sample (every 0.5 s for 30 s after);
  * storm: kill -9 of the whole fleet JVM and a new one started at once (every agent restarting together): seconds
    until all N are connected and online again, the fewest online meanwhile, and /health/ready probes that failed.
Prints and writes one JSON object. Needs python3, psql and a JDK; nothing else.
"""
import argparse
import concurrent.futures
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

TOKEN = "agent-fleet-bench"
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def live_heap_mb(pid):
    """The Java heap in use right after a full GC (jcmd GC.run, then GC.heap_info)."""
    subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True)
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True).stdout
    m = re.search(r"used (\d+)K", info)
    return round(int(m.group(1)) / 1024, 1) if m else None


def postgres_pids(data_dir):
    """The postmaster of data_dir (first line of postmaster.pid) and its backends."""
    with open(os.path.join(data_dir, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    out = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout
    return [postmaster] + [int(p) for p in out.split()]


def total_cpu(pids):
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total


def http(url, body=None):
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def metric(base, name):
    values = [float(line.rsplit(" ", 1)[1]) for line in http(base + "/metrics").splitlines() if line.startswith(name)]
    return sum(values)


def buckets(base):
    found = {}
    for line in http(base + "/metrics").splitlines():
        m = re.match(r'heteroflow_heartbeat_write_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
        if m and m.group(1) != "+Inf":
            found[float(m.group(1))] = float(m.group(2))
    return found


def quantile(before, after, q):
    """The q-quantile (seconds) of the observations between two cumulative histogram readings."""
    edges = sorted(after)
    deltas = [after[e] - before.get(e, 0) for e in edges]
    total = deltas[-1] if deltas else 0
    if total <= 0:
        return None
    for edge, count in zip(edges, deltas):
        if count >= q * total:
            return edge
    return edges[-1]


class Bench:
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="hf-agent-fleet-")
        self.procs = []
        self.result = {"count": args.count, "heartbeat_seconds": 2, "machine": os.uname().nodename,
                       "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    def java(self, name, *argv, heap="1g"):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        env = dict(os.environ, HETEROFLOW_ADMIN_TOKEN=TOKEN, HETEROFLOW_CLUSTER_NAME="fleet-bench-" + str(os.getpid()))
        proc = subprocess.Popen(["java", "-Xmx" + heap, "-jar", self.args.jar, *argv], stdout=log,
                                stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        self.procs.append(proc)
        return proc

    def wait_log(self, name, text, timeout):
        path = os.path.join(self.dir, name + ".log")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if text in open(path).read():
                return
            time.sleep(0.5)
        raise SystemExit(f"{name}: no '{text}' within {timeout} s; see {path}")

    def sql(self, query):
        return subprocess.run(["psql", "-tA", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "postgres", "-d",
                               "postgres", "-c", query], capture_output=True, text=True,
                              env=dict(os.environ, PGPASSWORD=self.pg_password)).stdout.strip()

    def online(self):
        value = self.sql("SELECT count(*) FROM nodes WHERE status = 'online'")
        return int(value) if value.isdigit() else 0

    def run(self):
        jar = self.args.jar
        certs = os.path.join(self.dir, "certs")
        subprocess.run(["java", "-jar", jar, "certs", "init", "--dir", certs], check=True, capture_output=True)
        for member in ("cp-1", "cp-2"):
            subprocess.run(["java", "-jar", jar, "certs", "issue", "--dir", certs, "--name", member, "--role", "member",
                            "--san", "127.0.0.1"], check=True, capture_output=True)
        self.pg_port = free_port()
        self.java("postgres", "postgres", "--port", str(self.pg_port), "--data-dir", os.path.join(self.dir, "pg"),
                  heap="256m")
        self.pg_data = os.path.join(self.dir, "pg", "pg")
        self.wait_log("postgres", "PostgreSQL is up", 120)
        self.pg_password = open(os.path.join(self.dir, "pg", "pg-password")).read().strip()
        url = f"postgresql://postgres:{self.pg_password}@127.0.0.1:{self.pg_port}/postgres"
        servers, bases, bridges = [], [], []
        for member in ("cp-1", "cp-2"):
            http_port, bridge_port = free_port(), free_port()
            servers.append(self.java(member, "server", "--pg-url", url, "--http-port", str(http_port), "--http-host",
                                     "127.0.0.1", "--certs-dir", certs, "--member-name", member, "--agent-bridge-port",
                                     str(bridge_port), "--agent-bridge-host", "127.0.0.1"))
            bases.append(f"http://127.0.0.1:{http_port}")
            bridges.append(f"127.0.0.1:{bridge_port}")
            self.wait_log(member, "Agent bridge: ", 180)
        time.sleep(10)
        idle = self.window([s.pid for s in servers], 20)
        idle["live_heap_mb"] = [live_heap_mb(s.pid) for s in servers]
        self.result["idle"] = idle

        fleet_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "conf", "fleet-dev.yaml")
        started = time.time()
        fleet = self.java("fleet", "agent", "--simulate-fleet", fleet_file, "--count", str(self.args.count),
                          "--control-plane", ",".join(bridges), "--certs-dir", certs, heap="3g")
        while self.online() < self.args.count:
            if time.time() - started > 900:
                raise SystemExit("the fleet did not come online within 900 s")
            time.sleep(1)
        self.result["all_online_seconds"] = round(time.time() - started, 1)
        time.sleep(20)
        before = [buckets(b) for b in bases]
        written_before = sum(metric(b, "heteroflow_heartbeat_write_seconds_count") for b in bases)
        pg_before, fleet_before = total_cpu(postgres_pids(self.pg_data)), cpu_seconds(fleet.pid)
        steady = self.window([s.pid for s in servers], 60)
        after = [buckets(b) for b in bases]
        written = sum(metric(b, "heteroflow_heartbeat_write_seconds_count") for b in bases) - written_before
        merged_before = {e: sum(b.get(e, 0) for b in before) for e in after[0]}
        merged_after = {e: sum(a.get(e, 0) for a in after) for e in after[0]}
        steady["heartbeat_write_p50_s"] = quantile(merged_before, merged_after, 0.5)
        steady["heartbeat_write_p99_s"] = quantile(merged_before, merged_after, 0.99)
        steady["live_heap_mb"] = [live_heap_mb(s.pid) for s in servers]
        steady["fleet_extra_live_heap_mb"] = round(sum(steady["live_heap_mb"]) - sum(idle["live_heap_mb"]), 1)
        steady["heartbeats_per_s"] = round(written / 60, 1)
        steady["heartbeats_per_s_expected"] = self.args.count / 2
        steady["postgres_cpu_percent"] = round(100 * (total_cpu(postgres_pids(self.pg_data)) - pg_before) / 60, 1)
        steady["fleet_jvm_cpu_percent"] = round(100 * (cpu_seconds(fleet.pid) - fleet_before) / 60, 1)
        steady["connections"] = [metric(b, "heteroflow_agent_bridge_connections ") for b in bases]
        steady["fleet_cpu_percent_of_one_core"] = round(sum(steady["cpu_percent"]) - sum(idle["cpu_percent"]), 1)
        steady["fleet_extra_rss_mb"] = round(sum(steady["rss_mb"]) - sum(idle["rss_mb"]), 1)
        steady["extra_rss_kb_per_connection"] = round(1024 * steady["fleet_extra_rss_mb"] / self.args.count, 1)
        self.result["steady"] = steady
        print(json.dumps(self.result, indent=1), flush=True)

        self.result["throughput"] = self.throughput(bases[0])
        print(json.dumps(self.result["throughput"]), flush=True)
        self.result["failover"] = self.failover(servers, bases)
        print(json.dumps(self.result["failover"]), flush=True)
        survivor = [b for b, s in zip(bases, servers) if s.poll() is None][0]
        self.result["storm"] = self.storm(fleet, survivor, fleet_file, bridges, certs)
        return self.result

    def window(self, pids, seconds):
        cpu = [cpu_seconds(p) for p in pids]
        time.sleep(seconds)
        return {"seconds": seconds, "cpu_percent": [round(100 * (cpu_seconds(p) - c) / seconds, 1)
                                                    for p, c in zip(pids, cpu)],
                "rss_mb": [round(rss_mb(p), 1) for p in pids]}

    def throughput(self, base):
        """--tasks one-card `sleep 1` tasks at once; tasks/s from the first creation to the last end (PostgreSQL's clock)."""
        tasks = self.args.tasks
        body = {"command": ["sleep", "1"], "gpu_required": 1}
        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda i: http(base + "/api/v1/tasks", dict(body, name=f"fleet-sleep-{i}")), range(tasks)))
        submitted = time.time() - started
        ended = "status IN ('succeeded', 'failed', 'stopped')"
        while int(self.sql(f"SELECT count(*) FROM tasks WHERE name LIKE 'fleet-sleep-%' AND {ended}") or 0) < tasks:
            if time.time() - started > 600:
                break
            time.sleep(0.5)
        row = self.sql("SELECT count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status = 'failed'),"
                       " extract(epoch FROM max(finished_at) - min(created_at)) FROM tasks"
                       " WHERE name LIKE 'fleet-sleep-%'").split("|")
        succeeded, failed, seconds = int(row[0]), int(row[1]), float(row[2] or 0)
        reasons = self.sql("SELECT coalesce(reason_code, '') || ':' || count(*) FROM tasks WHERE name LIKE"
                           " 'fleet-sleep-%' AND status = 'failed' GROUP BY reason_code")
        return {"tasks": tasks, "succeeded": succeeded, "failed": failed, "failed_reasons": reasons.split(),
                "submit_seconds": round(submitted, 1), "seconds": round(seconds, 1),
                "tasks_per_s": round((succeeded + failed) / seconds, 1) if seconds else None}

    def failover(self, servers, bases):
        counts = [metric(b, "heteroflow_agent_bridge_connections ") for b in bases]
        victim = 0 if counts[0] >= counts[1] else 1
        survivor = bases[1 - victim]
        killed = time.time()
        servers[victim].send_signal(signal.SIGKILL)
        reconnected, least_online, back = None, self.args.count, None
        while time.time() - killed < 60:
            online = self.online()
            least_online = min(least_online, online)
            try:
                if reconnected is None and metric(survivor, "heteroflow_agent_bridge_connections ") >= self.args.count:
                    reconnected = round(time.time() - killed, 1)
            except OSError:
                pass
            if back is None and reconnected is not None and online == self.args.count:
                back = round(time.time() - killed, 1)
            if back is not None and time.time() - killed > 30:
                break
            time.sleep(0.5)
        return {"killed_connections": counts[victim], "all_reconnected_seconds": reconnected,
                "all_online_seconds": back, "least_online": least_online,
                "nodes_marked_offline": int(self.sql("SELECT count(*) FROM nodes WHERE status <> 'online'") or 0)}

    def storm(self, fleet, survivor, fleet_file, bridges, certs):
        """The whole fleet killed with -9 and started again at once: every agent restarts together."""
        fleet.send_signal(signal.SIGKILL)
        fleet.wait()
        started = time.time()
        self.java("fleet-again", "agent", "--simulate-fleet", fleet_file, "--count", str(self.args.count),
                  "--control-plane", ",".join(bridges), "--certs-dir", certs, heap="3g")
        connected, least_online, ready_failures, samples = None, self.args.count, 0, 0
        while time.time() - started < 600:
            least_online = min(least_online, self.online())
            samples += 1
            try:
                urllib.request.urlopen(survivor + "/health/ready", timeout=5).read()
            except OSError:
                ready_failures += 1
            if metric(survivor, "heteroflow_agent_bridge_connections ") >= self.args.count \
                    and self.online() == self.args.count:
                connected = round(time.time() - started, 1)
                break
            time.sleep(1)
        return {"all_reconnected_and_online_seconds": connected, "least_online": least_online,
                "ready_probe_failures": ready_failures, "ready_probes": samples}

    def close(self):
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


FIGURES = [
    ("all_online_seconds", "start: all online, s"),
    ("steady.fleet_cpu_percent_of_one_core", "control planes' CPU for the fleet, % of one core"),
    ("steady.fleet_extra_rss_mb", "control planes' extra RSS, MB"),
    ("steady.fleet_extra_live_heap_mb", "control planes' extra live heap after GC, MB"),
    ("steady.heartbeats_per_s", "heartbeats written / s"),
    ("steady.heartbeat_write_p50_s", "heartbeat write p50, s"),
    ("steady.heartbeat_write_p99_s", "heartbeat write p99, s"),
    ("steady.postgres_cpu_percent", "PostgreSQL CPU, % of one core"),
    ("steady.fleet_jvm_cpu_percent", "fleet JVM CPU, % of one core"),
    ("throughput.tasks_per_s", "sleep-1 tasks / s"),
    ("throughput.failed", "tasks failed"),
    ("failover.all_reconnected_seconds", "kill -9: all reconnected, s"),
    ("failover.all_online_seconds", "kill -9: all online, s"),
    ("failover.nodes_marked_offline", "kill -9: nodes offline after"),
    ("failover.least_online", "kill -9: fewest online"),
    ("storm.all_reconnected_and_online_seconds", "storm: all back online, s"),
    ("storm.least_online", "storm: fewest online"),
]


def summarise(files):
    """Median [min-max] of each figure over several runs' JSON files."""
    import statistics
    runs = [json.load(open(f)) for f in files]
    for key, label in FIGURES:
        values = []
        for run in runs:
            value = run
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if isinstance(value, (int, float)):
                values.append(value)
        if values:
            print(f"{label}: {statistics.median(values):g} [{min(values):g}-{max(values):g}] ({len(values)} runs)")


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--summarise":
        return summarise(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--json")
    parser.add_argument("--jar", default=os.path.abspath("launcher/target/heteroflow.jar"))
    args = parser.parse_args()
    args.jar = os.path.abspath(args.jar)
    bench = Bench(args)
    try:
        result = bench.run()
    finally:
        bench.close()
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
