#!/usr/bin/env python3
"""Instructions per webhook, counted by valgrind's callgrind: a figure that wall-clock noise
does not move, to compare two builds of the intake path.

    python3 Benchmarks/instructions.py [--webhooks 1000] [--top 25] [--by-thread] [--bare-route] [--nio-route]

Runs `herald serve`'s application (release `herald-instructions`: the same application behind a
synchronous main, which valgrind 3.19 needs; local development provider, a fresh SQLite file)
under `valgrind --tool=callgrind` twice: once taking --webhooks webhooks, once three times as
many, one at a time over one keep-alive connection (each with a fresh raw iOS token); both runs
start, wait the same idle time and stop the same way. The difference of the two totals, divided
by the difference in webhooks, is what one more webhook costs inside Herald, start-up and
first-use costs cancelled out: HTTP parse, route, token lookup, group commit, the local
provider's send and record, the outcome's write. Prints that, and the functions with the most
instructions of their own in the larger run (`callgrind_annotate`). Needs valgrind
(apt); takes a few minutes. Build first: `swift build -c release --product herald-instructions`.

`--bare-route` counts a bare Hummingbird POST route at the same path the same way (the same
requests, one at a time), and prints how many times that a webhook costs: the framework's share,
which no change inside Herald's handler can remove. `--nio-route` counts the same route on
swift-nio's HTTP/1 pipeline alone (a ChannelInboundHandler, no Hummingbird and no async): what a
hand-written HTTP path would leave of that share.

`--by-thread` runs the pair again with one count per thread and prints the per-webhook figure of
each kind of thread: the SQLite writer (commits, and the sends it starts while idle), the HTTP
connections' loop, the reader, the dispatch queues and Swift's pool.
"""
import argparse
import glob
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

from fastpath import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def post_all(port, count):
    """`count` webhooks in turn over one connection; returns how many were answered 200."""
    sock = socket.create_connection(("127.0.0.1", port))
    reader = sock.makefile("rb")
    ok = 0
    for i in range(count):
        body = '{"event":"swap.update","data":{"id":"cg-%d","status":"transaction.mempool"}}' % i
        sock.sendall(("POST /api/v1/notify?platform=ios&token=%064x HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (i + 1, len(body), body)).encode())
        status = reader.readline()
        length = 0
        while True:
            line = reader.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        reader.read(length)
        ok += status.split(b" ")[1] == b"200"
    sock.close()
    return ok


def run(binary, work, name, webhooks, by_thread=False, bare=None):
    """One `herald serve` under callgrind; returns (total instructions, callgrind output file).
    With `by_thread`, the total is a dict: kind of thread -> instructions. With `bare`
    (`--bare-route` or `--nio-route`), that bare route instead of `herald serve`."""
    port = free_port()
    out = os.path.join(work, "callgrind.%s" % name)
    env = dict(os.environ, HERALD_LOG_LEVEL="warning")
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
        + (["--separate-threads=yes"] if by_thread else []) + [binary, str(port),
         bare or os.path.join(work, "%s.sqlite" % name)],
        env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "%s.log" % name), "w"))
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit("herald serve under valgrind exited; see " + os.path.join(work, "%s.log" % name))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    time.sleep(3)
    ok = post_all(port, webhooks) if webhooks else 0
    time.sleep(3)  # the last outcomes written
    process.send_signal(signal.SIGTERM)
    process.wait(120)
    if by_thread:
        return thread_totals(out), out, ok
    text = open(out).read()
    total = int(re.search(r"^summary: (\d+)", text, re.M).group(1)) if "summary:" in text else \
        int(re.search(r"^totals: (\d+)", text, re.M).group(1))
    return total, out, ok


# What a thread runs tells its kind: the first whose every marker it has. The store's two threads
# both run DatabaseThread.run; only the writer writes. Names are matched demangled.
THREAD_KINDS = [
    ("the SQLite writer", ("DatabaseThread.run", "writeWithoutTransaction")),
    ("the SQLite reader", ("DatabaseThread.run",)),
    ("the HTTP connections' loops", ("HTTPChannelHandler",)),
    ("dispatch queues and Swift's pool", ("_dispatch_worker_thread",)),
]


def thread_totals(out):
    """Instructions per kind of thread, from callgrind's one file per thread."""
    totals = {}
    for path in sorted(glob.glob(out + "-*")):
        text = subprocess.run(["swift", "demangle", "--simplified"], input=open(path).read(),
                              capture_output=True, text=True).stdout
        match = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if not match:
            continue
        kind = next((name for name, markers in THREAD_KINDS if all(m in text for m in markers)), "others")
        totals[kind] = totals.get(kind, 0) + int(match.group(1))
    return totals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--webhooks", type=int, default=1000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--herald", default=os.path.join(ROOT, ".build/release/herald-instructions"))
    parser.add_argument("--by-thread", action="store_true", help="also count each kind of thread apart")
    parser.add_argument("--nio-route", action="store_true",
                        help="also count the same route on swift-nio's HTTP/1 pipeline alone, without Hummingbird")
    parser.add_argument("--bare-route", action="store_true",
                        help="also count a bare Hummingbird POST route the same way, for the framework's share")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="herald-callgrind-")
    # valgrind 3.19 gives up on the DWARF 5 the Swift toolchain writes; symbols are enough.
    binary = os.path.join(work, "herald")
    subprocess.run(["strip", "--strip-debug", "-o", binary, args.herald], check=True)
    args.herald = binary
    small, _, ok_small = run(args.herald, work, "small", args.webhooks)
    large, out, ok_large = run(args.herald, work, "large", 3 * args.webhooks)
    print("herald serve under callgrind: %d and %d webhooks (%d and %d answered 200), one at a time" % (
        args.webhooks, 3 * args.webhooks, ok_small, ok_large))
    print("  instructions: %d and %d" % (small, large))
    print("  per webhook: %.0f instructions" % ((large - small) / (2 * args.webhooks)))
    small_total, large_total = small, large
    annotate = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
    lines = [l for l in annotate.splitlines() if re.match(r"^\s*[\d,]+ \(\s*[\d.]+%\)\s+\S", l) and "PROGRAM TOTALS" not in l]
    demangled = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(lines[:args.top]),
                               capture_output=True, text=True).stdout or "\n".join(lines[:args.top])
    print("  instructions of their own in the larger run, top %d (%s):" % (args.top, out))
    for line in demangled.splitlines():
        print("   " + line.strip()[:160])
    if args.by_thread:
        small, _, _ = run(args.herald, work, "small-threads", args.webhooks, by_thread=True)
        large, _, _ = run(args.herald, work, "large-threads", 3 * args.webhooks, by_thread=True)
        print("  per webhook, by thread (the same pair again, one count per thread):")
        for kind in sorted(large, key=lambda k: small.get(k, 0) - large[k]):
            print("   %8.0f  %s" % ((large[kind] - small.get(kind, 0)) / (2 * args.webhooks), kind))
    if args.bare_route:
        bare_small, _, bare_ok_small = run(args.herald, work, "bare-small", args.webhooks, bare="--bare-route")
        bare_large, _, bare_ok_large = run(args.herald, work, "bare-large", 3 * args.webhooks, bare="--bare-route")
        webhook = (large_total - small_total) / (2 * args.webhooks)
        bare = (bare_large - bare_small) / (2 * args.webhooks)
        print("  a bare Hummingbird POST route, the same requests (%d and %d answered 200): %.0f instructions "
              "per request; a webhook is %.1fx that" % (bare_ok_small, bare_ok_large, bare, webhook / bare))

    if args.nio_route:
        nio_small, _, nio_ok_small = run(args.herald, work, "nio-small", args.webhooks, bare="--nio-route")
        nio_large, _, nio_ok_large = run(args.herald, work, "nio-large", 3 * args.webhooks, bare="--nio-route")
        nio = (nio_large - nio_small) / (2 * args.webhooks)
        print("  the same route on swift-nio's HTTP/1 pipeline alone (%d and %d answered 200): %.0f instructions "
              "per request; a webhook is %.1fx that" % (
                  nio_ok_small, nio_ok_large, nio, (large_total - small_total) / (2 * args.webhooks) / nio))

if __name__ == "__main__":
    main()
