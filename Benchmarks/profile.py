#!/usr/bin/env python3
"""Where `herald serve`'s CPU goes at one load, by `perf record` (apt: linux-perf).

    python3 Benchmarks/profile.py [--rate 100] [--seconds 10] [--wrk]

Starts the nginx APNs sink and a release `herald serve` as fastpath.py does, samples Herald's
threads (cpu-clock, with call graphs) while pacer.py sends --rate webhooks/s with a fresh token
each (or wrk -c64 with --wrk), then prints the top functions by self time and the split of
samples between the kernel, Swift's runtime, libc, SQLite, BoringSSL and Herald's own code.
The raw profile stays in the printed folder for `perf report -i`.
"""
import argparse
import collections
import os
import subprocess
import tempfile
import time

from fastpath import WRK_SCRIPT, pace, start_herald, start_sink, stop_herald, stop_sink

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BUCKETS = [
    ("kernel", lambda dso, sym: dso.startswith("[kernel")),
    ("Swift runtime and Concurrency", lambda dso, sym: "libswiftCore" in dso or "libswift_Concurrency" in dso),
    ("Foundation", lambda dso, sym: "Foundation" in dso),
    ("Dispatch", lambda dso, sym: "libdispatch" in dso),
    ("libc (malloc, futex, memcpy)", lambda dso, sym: dso.startswith("libc") or "ld-linux" in dso),
    ("SQLite", lambda dso, sym: "sqlite" in dso.lower() or sym.startswith("sqlite3")),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--wrk", action="store_true", help="full load (wrk -c64) instead of a paced rate")
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build/release/herald"))
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="herald-profile-")
    os.environ["KEEP"] = "1"
    master, log, env = start_sink(work)
    server, port = start_herald(args.herald, os.path.join(work, "herald.sqlite"), env, os.path.join(work, "herald.log"))
    try:
        time.sleep(2)
        data = os.path.join(work, "perf.data")
        perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4999", "-g", "-p", str(server.pid), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        if args.wrk:
            script = os.path.join(work, "webhook.lua")
            open(script, "w").write(WRK_SCRIPT)
            subprocess.run(["wrk", "-t1", "-c64", "-d%ds" % args.seconds, "-s", script, "http://127.0.0.1:%d/" % port],
                           capture_output=True)
            load = "wrk -c64 %d s" % args.seconds
        else:
            pace(port, args.rate, args.seconds)
            load = "%d webhooks/s for %d s" % (args.rate, args.seconds)
        time.sleep(1)
        perf.send_signal(2)
        perf.wait()
    finally:
        stop_herald(server)
        stop_sink(master, work)
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none",
                             "--percent-limit", "0"], capture_output=True, text=True).stdout
    rows = []
    for line in report.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].endswith("%"):
            rows.append((float(parts[0][:-1]), parts[1], " ".join(parts[3:])))
    print("herald serve, %s; %s" % (load, data))
    split = collections.Counter()
    for share, dso, sym in rows:
        bucket = next((name for name, test in BUCKETS if test(dso, sym)), None)
        own = dso == os.path.basename(args.herald)
        split[bucket or ("Herald and its Swift packages" if own else "other (%s)" % dso)] += share
    for name, share in split.most_common():
        print("  %5.1f%%  %s" % (share, name))
    print("top functions by self time:")
    for share, dso, sym in rows[:args.top]:
        print("  %5.2f%%  %-28s %s" % (share, dso[:28], sym[:110]))


if __name__ == "__main__":
    main()
