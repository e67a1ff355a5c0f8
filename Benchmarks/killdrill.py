#!/usr/bin/env python3
"""The kill drill: two `herald serve` on one PostgreSQL database, webhooks to both, one SIGKILLed
mid-burst, optionally while busy loops compete for the cores (a shared host).

    python3 Benchmarks/killdrill.py [--runs 20] [--busy 3] [--herald .build/release/herald]
                                    [--seconds 6] [--kill-at 2.5] [--wait 45] [--lease 5]
                                    [--senders 16]

Needs nginx-light (the APNs-shaped sink of ../shared/bench/apns_sink.sh, or BENCH_DIR), openssl
and the PostgreSQL 15 binaries. Per run: a fresh database; --senders threads post webhooks with
fresh device tokens, spread over both instances, for --seconds; instance A is SIGKILLed
--kill-at seconds in (its senders move to B); then B has --wait seconds to get every
acknowledged webhook to the sink. Prints per run: acknowledged, lost (acknowledged, never
logged by the sink with a 200), sent twice (tokens the sink logged more than once, as a share
of those acknowledged), and when the last one arrived after the kill. For every lost webhook its
job's row is printed (state, attempts, lease, next attempt, errors), so the sequence can be
read. Exit status 1 when a run lost one or sent more than --max-duplicates twice.
"""
import argparse
import hashlib
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fastpath import free_port, sink_lines, start_herald, start_sink, stop_herald, stop_sink  # noqa: E402
from scaleout import PG_BIN, as_postgres, create_database, start_postgres  # noqa: E402

ROOT = os.path.dirname(HERE)


def psql(port, database, *arguments):
    return subprocess.run(["psql", "-X", "-q", "-A", "-F", " | ", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                           "-d", database] + list(arguments[:-1]) + ["-c", arguments[-1]], capture_output=True, text=True).stdout


def pushes(args, pg_port, database, sink_log, before):
    """(arrival, token) of every push the push service took: the sink's 200s, or the local
    provider's rows."""
    if not args.local:
        return sink_lines(sink_log)[before:]
    rows = psql(pg_port, database, "-t", "SELECT created_at, token FROM local_push").split()
    return [(float(rows[i]), rows[i + 2]) for i in range(0, len(rows) - 2, 3)]


WRK_SCRIPT = """
local counter = 0
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("number", threads)
end
function init(args)
  acked = io.open(args[1] .. number, "w")
  prefix = args[2]
end
function request()
  counter = counter + 1
  local token = string.format("%%s%%08x%%016x", prefix, number, counter)
  return wrk.format("POST", "/api/v1/notify?platform=ios&token=" .. token, {["Content-Type"] = "application/json"},
    '{"event":"swap.update","data":{"id":"w-' .. counter .. '","status":"transaction.mempool"}}')
end
function response(status, headers, body)
  if status == 200 then
    acked:write(body, "\\n")
    acked:flush()
  end
end
"""


def wrk(args, work, name, label, port):
    """wrk posting webhooks to one instance for --seconds, each acknowledged job id to a file."""
    script = os.path.join(work, "drill.lua")
    with open(script, "w") as f:
        f.write(WRK_SCRIPT % ())
    prefix = hashlib.sha256((name + label).encode()).hexdigest()[:40]
    return subprocess.Popen(["wrk", "-t2", "-c%d" % (args.senders // 2), "-d%ds" % args.seconds, "-s", script,
                             "http://127.0.0.1:%d/" % port, "--", os.path.join(work, "%s-acked-%s-" % (name, label)), prefix],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def drill(args, env, work, sink_log, pg_port, index):
    name = "drill%d_%d" % (os.getpid(), index)
    database = create_database(pg_port, name)
    env = dict(env, HERALD_LEASE_SECONDS=str(args.lease), HERALD_TARGET_PUSHES_PER_MINUTE="1000000",
               HERALD_TARGET_PUSH_BURST="1000000", HERALD_LOG_LEVEL="notice")
    a, a_port = start_herald(args.herald, database, env, os.path.join(work, "%s-a.log" % name))
    b, b_port = start_herald(args.herald, database, env, os.path.join(work, "%s-b.log" % name))
    acked = []
    lock = threading.Lock()
    killed = threading.Event()
    stop = threading.Event()
    counter = [0]

    def sender(number):
        connection = None
        port = None
        while not stop.is_set():
            want = b_port if number % 2 or killed.is_set() else a_port
            if connection is None or port != want:
                if connection:
                    connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", want, timeout=10)
                port = want
            with lock:
                counter[0] += 1
                n = counter[0]
            token = hashlib.sha256(("%s-%d" % (name, n)).encode()).hexdigest()
            body = json.dumps({"event": "swap.update", "data": {"id": "d-%d" % n, "status": "transaction.mempool"}})
            try:
                connection.request("POST", "/api/v1/notify?platform=ios&token=" + token, body=body,
                                   headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    with lock:
                        acked.append(token)
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = None

    before = 0 if args.local else len(sink_lines(sink_log))
    if args.wrk:
        wrks = [wrk(args, work, name, label, port) for label, port in (("a", a_port), ("b", b_port))]
        time.sleep(args.kill_at)
        a.send_signal(signal.SIGKILL)
        a.wait()
        killed_at = time.monotonic()
        for process in wrks:
            process.wait()
        ids = set()
        for file in os.listdir(work):
            if file.startswith(name + "-acked-"):
                with open(os.path.join(work, file)) as f:
                    ids.update(json.loads(line)["id"] for line in f if line.strip())
        tokens = dict(line.split(" | ") for line in psql(pg_port, name, "-t", "SELECT id, token FROM job").split("\n") if " | " in line)
        acked = [tokens[i] for i in ids if i in tokens]
    else:
        threads = [threading.Thread(target=sender, args=(i,)) for i in range(args.senders)]
        started = time.monotonic()
        for t in threads:
            t.start()
        time.sleep(args.kill_at)
        a.send_signal(signal.SIGKILL)
        a.wait()
        killed_at = time.monotonic()
        killed.set()
        time.sleep(max(0.0, args.seconds - (time.monotonic() - started)))
        stop.set()
        for t in threads:
            t.join()
    wanted = set(acked)
    deadline = killed_at + args.wait
    while True:
        rows = pushes(args, pg_port, name, sink_log, before)
        seen = {}
        for arrived, token in rows:
            if token in wanted:
                seen.setdefault(token, []).append(arrived)
        if len(seen) == len(wanted) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    lost = sorted(wanted - set(seen))
    killed_wall = time.time() - (time.monotonic() - killed_at)
    # Jobs committed before the kill whose outcome came after A's leases ran out: taken over by B.
    taken_over = psql(pg_port, name, "-t", "SELECT count(*) FROM job WHERE created_at < %f AND last_attempt_at > %f"
                      % (killed_wall, killed_wall + args.lease - 0.5)).strip().splitlines()
    all_lines = len(pushes(args, pg_port, name, sink_log, before))
    twice = sum(1 for times in seen.values() if len(times) > 1)
    last = max((t for times in seen.values() for t in times), default=0)
    after_kill = last - (time.time() - (time.monotonic() - killed_at))
    print("run %2d: acked %5d  lost %d  sent twice %4d (%.2f%%)  last arrival %.1f s after the kill; taken over %s, "
          "sink lines %d" % (index + 1, len(wanted), len(lost), twice, 100.0 * twice / max(len(wanted), 1), after_kill,
                             taken_over[-1] if taken_over else "?", all_lines), flush=True)
    for token in lost:
        print(psql(pg_port, name, "SELECT id, state, attempts, to_timestamp(created_at) AS created, "
                                  "to_timestamp(next_attempt_at) AS next_attempt, to_timestamp(lease_until) AS lease_until, "
                                  "to_timestamp(first_attempt_at) AS first_attempt, to_timestamp(last_attempt_at) AS last_attempt, "
                                  "to_timestamp(finished_at) AS finished, last_error FROM job WHERE token = '%s'" % token))
        print("  now:", time.strftime("%H:%M:%S"), "killed at", time.strftime("%H:%M:%S", time.localtime(time.time() - (time.monotonic() - killed_at))))
    stop_herald(b)
    if lost:
        print("  B's log: %s" % os.path.join(work, "%s-b.log" % name))
    return len(wanted), len(lost), twice


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build/release/herald"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", type=int, default=3, help="busy loops competing for the cores")
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--kill-at", type=float, default=2.5)
    parser.add_argument("--wait", type=float, default=45)
    parser.add_argument("--lease", type=int, default=5)
    parser.add_argument("--senders", type=int, default=16)
    parser.add_argument("--wrk", action="store_true", help="wrk as the senders (open the throttle), not Python threads")
    parser.add_argument("--local", action="store_true",
                        help="the local development provider (pushes are rows in the database) instead of the sink")
    parser.add_argument("--max-duplicates", type=float, default=0.01)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="herald-killdrill-")
    os.chmod(work, 0o755)
    if args.local:
        master, sink_log, env = None, None, dict(os.environ, HERALD_LOG_LEVEL="warning")
    else:
        master, sink_log, env = start_sink(work)
    pg_port, pg_data = start_postgres(work)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    totals = [0, 0, 0]
    failed = 0
    try:
        print("kill drill: %d runs, %d busy loops, %d senders for %.1f s, SIGKILL at %.1f s, lease %d s, %.0f s to deliver"
              % (args.runs, args.busy, args.senders, args.seconds, args.kill_at, args.lease, args.wait), flush=True)
        for index in range(args.runs):
            acked, lost, twice = drill(args, env, work, sink_log, pg_port, index)
            totals = [totals[0] + acked, totals[1] + lost, totals[2] + twice]
            if lost or twice > args.max_duplicates * acked:
                failed += 1
    finally:
        for process in busy:
            process.kill()
        subprocess.run(as_postgres([PG_BIN + "/pg_ctl", "-D", pg_data, "-m", "fast", "stop"]), stdout=subprocess.DEVNULL)
        if master:
            stop_sink(master, work)
    print("total: acked %d, lost %d, sent twice %d (%.2f%%); runs over the bounds: %d of %d" % (
        totals[0], totals[1], totals[2], 100.0 * totals[2] / max(totals[0], 1), failed, args.runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
