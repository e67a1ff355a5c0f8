#!/usr/bin/env python3
"""End to end on each store, in one run: SQLite, PostgreSQL with one instance, PostgreSQL with two.

    python3 Benchmarks/scaleout.py [--seconds 20] [--connections 64]

Builds nothing: run `swift build -c release --product herald` first. Needs nginx-light and wrk
(apt), the PostgreSQL 15 binaries (`postgresql-15`), and ../shared/bench/apns_sink.sh beside the
repository (or BENCH_DIR). Everything runs on 127.0.0.1 and shares this machine's cores: the
sink, wrk, PostgreSQL and Herald, so compare the rows of one run with each other, not with
another machine.

For each setup: wrk posts webhooks for --seconds (fresh device token per request; with two
instances, two wrk processes split the connections between them), then waits until the sink has
logged every acknowledged token. Prints per setup: acknowledged webhooks/s, delivered/s, whether
every acknowledged webhook was delivered, tokens delivered more than once, and CPU µs per
webhook of Herald (all instances) and of PostgreSQL.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

from fastpath import (cpu_seconds, free_port, nginx_pids, sink_lines, start_herald, start_sink, stop_herald, stop_sink,
                      wrk_output_numbers)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PG_BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(command):
    return (["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []) + command


def start_postgres(work):
    """A throwaway PostgreSQL 15 on a free loopback port; returns (url, data dir, pids getter)."""
    folder = os.path.join(work, "pg")
    os.makedirs(folder)
    if os.getuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data = os.path.join(folder, "data")
    subprocess.run(as_postgres([PG_BIN + "/initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-locale",
                                "-E", "UTF8"]), check=True, stdout=subprocess.DEVNULL)
    port = free_port()
    subprocess.run(as_postgres([PG_BIN + "/pg_ctl", "-D", data, "-l", os.path.join(folder, "server.log"), "-w", "-o",
                                "-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories='%s' "
                                "-c max_connections=200" % (port, folder), "start"]),
                   check=True, stdout=subprocess.DEVNULL)
    return port, data


def postgres_cpu(data):
    """CPU seconds of the postmaster and every backend (they are its children)."""
    try:
        master = int(open(os.path.join(data, "postmaster.pid")).readline())
    except OSError:
        return 0.0
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True).stdout
    return sum(cpu_seconds(p) for p in [master] + [int(p) for p in out.split()])


def create_database(port, name):
    subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", "postgres",
                    "-c", "CREATE DATABASE %s" % name], check=True)
    return "postgres://postgres@127.0.0.1:%d/%s" % (port, name)


def run_setup(name, args, env, work, database, instances, sink_log, marker, pg_data):
    servers = [start_herald(args.herald, database, env, os.path.join(work, "%s-%d.log" % (marker, i)))
               for i in range(instances)]
    time.sleep(2)
    script = os.path.join(work, "%s.lua" % marker)
    wrks = []
    try:
        for index, (_, port) in enumerate(servers):
            with open(script + str(index), "w") as f:
                # The token's first 16 hex digits count, the next 8 name the instance, the rest
                # name the setup: tokens are unique across instances and setups.
                f.write('''wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
counter = 0
request = function()
  counter = counter + 1
  local token = string.format("%%016x%%08x%%040x", counter, %d, 0x%s)
  return wrk.format(nil, "/api/v1/notify?platform=ios&token=" .. token,
    nil, '{"event":"swap.update","data":{"id":"wrk-' .. counter .. '","status":"transaction.mempool"}}')
end
''' % (index, marker))
        before = len(sink_lines(sink_log))
        h0 = sum(cpu_seconds(p.pid) for p, _ in servers)
        p0 = postgres_cpu(pg_data) if pg_data else 0.0
        started = time.monotonic()
        per = max(1, args.connections // instances)
        for index, (_, port) in enumerate(servers):
            wrks.append(subprocess.Popen(["wrk", "-t1", "-c%d" % per, "-d%ds" % args.seconds, "-s", script + str(index),
                                          "http://127.0.0.1:%d/" % port], stdout=subprocess.PIPE, text=True))
        acked, seconds = 0, 0.0
        for w in wrks:
            total, secs, bad = wrk_output_numbers(w.communicate()[0])
            acked += total - bad
            seconds = max(seconds, secs)
        deadline = time.monotonic() + 180
        suffix = "%040x" % int(marker, 16)
        while True:
            rows = [r for r in sink_lines(sink_log)[before:] if r[1].endswith(suffix)]
            tokens = {uri for _, uri in rows}
            if len(tokens) >= acked or time.monotonic() > deadline:
                break
            time.sleep(1)
        drained = time.monotonic() - started
        h1 = sum(cpu_seconds(p.pid) for p, _ in servers)
        p1 = postgres_cpu(pg_data) if pg_data else 0.0
        times = [t for t, _ in rows]
        span = (max(times) - min(times)) if len(times) > 1 else float("nan")
        print("%-28s acked %6.0f/s  delivered %6.0f/s  all delivered: %-3s  twice: %d  done after %5.1f s  "
              "CPU/webhook: herald %4.0f µs, postgres %4.0f µs" % (
                  name, acked / seconds, len(times) / span, "yes" if len(tokens) >= acked else "NO",
                  len(rows) - len(tokens), drained, (h1 - h0) / max(acked, 1) * 1e6, (p1 - p0) / max(acked, 1) * 1e6))
    finally:
        for process, _ in servers:
            stop_herald(process)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build/release/herald"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="herald-scaleout-")
    os.chmod(work, 0o755)
    master, sink_log, env = start_sink(work)
    pg_port, pg_data = start_postgres(work)
    try:
        print("wrk -c%d for %d s per setup; sink: nginx (../shared/bench/apns_sink.sh)" % (args.connections, args.seconds))
        print("  sink processes: %s" % nginx_pids(master))
        run_setup("SQLite, 1 instance", args, env, work, os.path.join(work, "herald.sqlite"), 1, sink_log, "a1", None)
        run_setup("PostgreSQL, 1 instance", args, env, work, create_database(pg_port, "one"), 1, sink_log, "b2", pg_data)
        run_setup("PostgreSQL, 2 instances", args, env, work, create_database(pg_port, "two"), 2, sink_log, "c3", pg_data)
    finally:
        subprocess.run(as_postgres([PG_BIN + "/pg_ctl", "-D", pg_data, "-m", "fast", "stop"]), stdout=subprocess.DEVNULL)
        stop_sink(master, work)


if __name__ == "__main__":
    main()
