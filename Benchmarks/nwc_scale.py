#!/usr/bin/env python3
"""NWC at scale: --wallets wallets (10,000 by default) watched on three relays.

    python3 Benchmarks/nwc_scale.py [--herald .build/release/herald] [--wallets 10000] [--requests 500]

Three rust-nostr `LocalRelay`s (PyPI nostr-sdk), each behind nginx TLS; `herald serve` on SQLite
with the local development provider. Every wallet registers (its own node key, an LN signed
message made with coincurve) with all three relays and one phone's webhook URL. Prints:

- the time from the last registration until Herald holds every wallet's subscription on each
  relay (its `herald_nwc_subscriptions{relay}` at ceil(wallets / 256) filters);
- Herald's RSS before and after, and per 1,000 wallets;
- for --requests NIP-47 requests to random wallets, each published to one relay: the time from
  publishing to the push being readable on the phone's feed, p50 and p99, and whether each
  request was pushed exactly once.

Needs nginx, openssl, `pip install nostr-sdk==0.45.1 coincurve websockets`.
"""
import argparse
import asyncio
import concurrent.futures
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "scripts"))
from nwc_relays import HOST, free_port, http, ln_sign, start_nginx, wait_for  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--herald", default=str(ROOT / ".build/release/herald"))
    parser.add_argument("--wallets", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=500)
    args = parser.parse_args()
    import coincurve
    from nostr_sdk import EventBuilder, Keys, Kind, LocalRelayBuilder, RateLimit, Tag
    from websockets.sync.client import connect

    work = Path(tempfile.mkdtemp(prefix="herald-nwc-scale-"))
    os.chmod(work, 0o755)
    relay_ports = [free_port() for _ in range(3)]
    tls_ports = [free_port() for _ in range(3)]
    locals_ = []
    for port in relay_ports:
        # The bench publishes far faster than a person: lift LocalRelay's per-connection limit of notes a minute.
        relay = LocalRelayBuilder().port(port).rate_limit(RateLimit(max_reqs=100, notes_per_minute=1_000_000)).build()
        await relay.run()
        locals_.append(relay)
    nginx = start_nginx(work, list(zip(tls_ports, relay_ports)))
    relays = [f"wss://localhost:{port}" for port in tls_ports]
    direct = {relay: f"ws://{HOST}:{port}" for relay, port in zip(relays, relay_ports)}
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({"HERALD_DATABASE": str(work / "herald.sqlite"), "HERALD_PORT": str(port),
                "HERALD_TLS_CA_FILE": str(work / "cert.pem"), "HERALD_NOSTR_ALLOW_PRIVATE_RELAYS": "true",
                "HERALD_REGISTRATIONS_PER_MINUTE": "10000000", "HERALD_TARGET_PUSHES_PER_MINUTE": "10000000",
                "HERALD_TARGET_PUSH_BURST": "10000000", "HERALD_LOG_LEVEL": "notice"})
    log = open(work / "herald.log", "wb")
    server = subprocess.Popen([args.herald, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://{HOST}:{port}"
    try:
        wait_for(lambda: http("GET", f"{base}/health")[0] == 200 if _up(base) else False, 60)
        _, phone = http("POST", f"{base}/api/v1/devices", {"platform": "android", "push_token": "fcm-nwc-scale-phone"})
        before = rss_mb(server.pid)
        print(f"{args.wallets} wallets on 3 relays (LocalRelay behind nginx TLS); herald RSS {before:.0f} MB before", flush=True)

        def register(_: int):
            node, service, app = coincurve.PrivateKey(), Keys.generate(), Keys.generate()
            message = f"{phone['webhook_url']}-{service.public_key().to_hex()}-{app.public_key().to_hex()}-[{' '.join(relays)}]"
            status, _ = http("POST", f"{base}/nwc/{node.public_key.format(compressed=True).hex()}", {
                "webhookUrl": phone["webhook_url"], "walletServicePubkey": service.public_key().to_hex(),
                "appPubkey": app.public_key().to_hex(), "relays": relays, "signature": ln_sign(node, message)}, raw=True)
            return status, service, app

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            wallets = list(pool.map(register, range(args.wallets)))
        registered = time.monotonic()
        failed = sum(1 for status, _, _ in wallets if status != 200)
        print(f"registered in {registered - started:.1f} s ({failed} refused)", flush=True)
        filters = math.ceil(args.wallets / 256)
        # Subscribed everywhere once a request to the last wallet registered, on each relay, wakes the phone.
        _, service, app = wallets[-1]
        probes = {}
        for relay in relays:
            event = EventBuilder(Kind(23194), "probe").tags([Tag.public_key(service.public_key())]).finalize(app)
            probes[event.id().to_hex()] = (relay, json.loads(event.as_json()))
        arrived = set()
        after_seq = 0
        deadline = time.monotonic() + 300
        while len(arrived) < len(probes) and time.monotonic() < deadline:
            for event_id, (relay, event) in probes.items():
                if event_id not in arrived:
                    with connect(direct[relay]) as socket_:
                        socket_.send(json.dumps(["EVENT", event]))
                        socket_.recv(timeout=10)
            _, feed = http("GET", f"{base}/api/v1/devices/{phone['device_id']}/pushes?after={after_seq}&wait=1",
                           bearer=phone["device_secret"])
            for push in feed.get("pushes", []):
                arrived.add(json.loads(json.loads(push["payload"]["notification_payload"])["event"])["id"])
            after_seq = feed.get("next", after_seq)
        if len(arrived) < len(probes):
            _, metrics = http("GET", f"{base}/metrics", raw=True)
            print("not subscribed after 300 s:\n" + "\n".join(l for l in metrics.splitlines() if "nwc" in l and not l.startswith("#")))
            return 1
        ready = time.monotonic()
        print(f"every wallet subscribed on each relay {ready - registered:.1f} s after the last registration "
              f"({filters} filters a relay)", flush=True)
        time.sleep(2)
        after = rss_mb(server.pid)
        print(f"herald RSS {after:.0f} MB after: {(after - before) / args.wallets * 1000:.1f} MB per 1,000 wallets", flush=True)

        # Requests to random wallets, each on one relay; the phone's feed is read as they come.
        sockets = {relay: connect(direct[relay], max_size=None) for relay in relays}
        published = {}
        chosen = random.sample(wallets, min(args.requests, len(wallets)))
        seen = {}
        next_seq = after_seq

        def read_feed(wait: int) -> None:
            nonlocal next_seq
            _, feed = http("GET", f"{base}/api/v1/devices/{phone['device_id']}/pushes?after={next_seq}&wait={wait}",
                           bearer=phone["device_secret"])
            now = time.monotonic()
            for push in feed.get("pushes", []):
                event = json.loads(json.loads(push["payload"]["notification_payload"])["event"])
                seen.setdefault(event["id"], []).append(now)
            next_seq = feed.get("next", next_seq)

        for index, (_, service, app) in enumerate(chosen):
            event = EventBuilder(Kind(23194), "scale").tags([Tag.public_key(service.public_key())]).finalize(app)
            relay = relays[index % 3]
            sockets[relay].send(json.dumps(["EVENT", json.loads(event.as_json())]))
            answer = json.loads(sockets[relay].recv(timeout=10))
            if answer[0] != "OK" or answer[2] is not True:
                print(f"the relay refused a request: {answer}", flush=True)
            published[event.id().to_hex()] = time.monotonic()
            if index % 20 == 19:
                read_feed(0)
            time.sleep(0.01)
        deadline = time.monotonic() + 60
        while len(seen) < len(published) and time.monotonic() < deadline:
            read_feed(1)
        latencies = sorted((seen[i][0] - t) * 1000 for i, t in published.items() if i in seen)
        once = sum(1 for i in published if len(seen.get(i, [])) == 1)
        if len(latencies) < len(published):
            _, metrics = http("GET", f"{base}/metrics", raw=True)
            print("not every request pushed:\n" + "\n".join(l for l in metrics.splitlines() if "nwc" in l and not l.startswith("#")))
        if latencies:
            # The feed is read every 20 requests, so each latency includes up to that wait.
            print(f"{len(published)} requests: pushed {len(latencies)}, exactly once {once}; relay -> phone feed "
                  f"p50 {latencies[len(latencies) // 2]:.0f} ms, p99 {latencies[int(len(latencies) * 0.99) - 1]:.0f} ms", flush=True)
        for socket_ in sockets.values():
            socket_.close()
    finally:
        server.terminate()
        server.wait(30)
        subprocess.run([nginx, "-c", str(work / "nginx.conf"), "-s", "stop"], capture_output=True)
        log.close()
    for line in (work / "herald.log").read_text(errors="replace").splitlines():
        if "nwc" in line and ("ended" in line or "refused" in line):
            print("herald: " + line[line.find("]") + 1:].strip()[:300] if "]" in line else line[:300])
    if os.environ.get("KEEP"):
        print("kept", work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _up(base: str) -> bool:
    try:
        return http("GET", f"{base}/health")[0] == 200
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
