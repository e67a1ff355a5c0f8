#!/usr/bin/env python3
"""NWC on real relays: `herald serve` watching 40 wallets on two relays nobody here wrote, each
behind nginx TLS so Herald reaches them as `wss://`:

- PyPI `nostr-relay` (`serve --use-uvicorn`), which allows 32 subscriptions a connection and
  refuses the 33rd with a NOTICE;
- rust-nostr's `LocalRelay` (PyPI `nostr-sdk`);

then rust-nostr's NWC client (`NostrWalletConnect`) asks the development wallet (`herald-device
listen`, asleep until Herald pushes) for its balance on each relay, after `herald-device nwc
connect` published the wallet's info event.

    python3 scripts/nwc_relays.py --binary .build/debug/herald [--wallets 40]

Each wallet is registered as breez-lnurl's clients register (an LN signed message made with
coincurve), then every wallet's app publishes two NIP-47 requests (nostr-sdk, NIP-44 v2), one on
nostr-relay and one on LocalRelay: each wallet's phone must get exactly those two `nwc_event`
pushes, the events as the relays sent them. With one subscription per wallet, the 8 wallets past
nostr-relay's limit never got their first. Needs nginx, openssl and `pip install nostr-relay nostr-sdk==0.45.1 coincurve`.
Ends with `N passed, M failed`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HOST = "127.0.0.1"
ZBASE32 = "ybndrfg8ejkmcpqxot1uwisza345h769"


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.passed += ok
        self.failed += not ok
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail and not ok else ""), flush=True)
        return ok


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def http(method: str, url: str, body: object = None, bearer: str | None = None, raw: bool = False):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if bearer:
        request.add_header("Authorization", f"Bearer {bearer}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            return response.status, (text if raw else json.loads(text or "{}"))
    except urllib.error.HTTPError as error:
        text = error.read().decode()
        try:
            return error.code, (text if raw else json.loads(text or "{}"))
        except ValueError:
            return error.code, {"text": text}


def zbase32(data: bytes) -> str:
    bits = "".join(f"{byte:08b}" for byte in data)
    bits += "0" * (-len(bits) % 5)
    return "".join(ZBASE32[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))


def ln_sign(key, message: str) -> str:
    """An LN signed message as lnd writes it, made with coincurve, not by Herald."""
    digest = hashlib.sha256(hashlib.sha256(b"Lightning Signed Message:" + message.encode()).digest()).digest()
    signature = key.sign_recoverable(digest, hasher=None)
    return zbase32(bytes([31 + signature[64]]) + signature[:64])


def wait_for(predicate, within: float):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    return predicate()


def start_nginx(work: Path, routes: list[tuple[int, int]]) -> str:
    """TLS in front of each relay: (tls port, relay port) pairs; returns the nginx binary."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(work / "key.pem"), "-out", str(work / "cert.pem")], check=True, capture_output=True)
    temp = work / "nginx-tmp"
    temp.mkdir()
    servers = "".join(f"""
  server {{
    listen {HOST}:{tls} ssl;
    ssl_certificate {work}/cert.pem; ssl_certificate_key {work}/key.pem;
    location / {{
      proxy_pass http://{HOST}:{relay};
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 1h;
    }}
  }}""" for tls, relay in routes)
    user = "user root;\n" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {work}/nginx.pid;\nerror_log {work}/nginx-error.log warn;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\n  access_log off;\n"
        + "".join(f"  {kind}_temp_path {temp}/{kind};\n" for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"])
        + servers + "\n}\n")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    subprocess.run([nginx, "-c", str(work / "nginx.conf"), "-e", str(work / "nginx-error.log")], check=True)
    return nginx


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--device", help="the herald-device executable (default: beside --binary)")
    parser.add_argument("--wallets", type=int, default=40)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    import coincurve
    import yaml
    from nostr_sdk import EventBuilder, Keys, Kind, LocalRelayBuilder, Nip44Version, Tag, nip44_encrypt
    from websockets.sync.client import connect

    report = Report()
    work = Path(tempfile.mkdtemp(prefix="herald-nwc-relays-"))
    os.chmod(work, 0o755)
    python_relay, local_relay, herald_port = free_port(), free_port(), free_port()
    python_tls, local_tls = free_port(), free_port()

    # PyPI nostr-relay with its own default limits (32 subscriptions a connection).
    import nostr_relay
    config = yaml.safe_load((Path(nostr_relay.__file__).parent / "config.yaml").read_text())
    config["storage"]["sqlalchemy.url"] = f"sqlite+aiosqlite:///{work}/nostr-relay.sqlite3"
    config["gunicorn"]["bind"] = f"{HOST}:{python_relay}"
    config.setdefault("subscription_limit", 32)
    (work / "nostr-relay.yaml").write_text(yaml.safe_dump(config))
    relay_log = open(work / "nostr-relay.log", "wb")
    relay_process = subprocess.Popen([shutil.which("nostr-relay") or "nostr-relay", "-c", str(work / "nostr-relay.yaml"),
                                      "serve", "--use-uvicorn"], cwd=work, stdout=relay_log, stderr=subprocess.STDOUT)
    # rust-nostr's LocalRelay, in this process.
    local = LocalRelayBuilder().port(local_relay).build()
    await local.run()
    nginx = start_nginx(work, [(python_tls, python_relay), (local_tls, local_relay)])
    relays = [f"wss://localhost:{python_tls}", f"wss://localhost:{local_tls}"]
    direct = {relays[0]: f"ws://{HOST}:{python_relay}", relays[1]: f"ws://{HOST}:{local_relay}"}

    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({"HERALD_DATABASE": str(work / "herald.sqlite"), "HERALD_PORT": str(herald_port),
                "HERALD_TLS_CA_FILE": str(work / "cert.pem"), "HERALD_NOSTR_ALLOW_PRIVATE_RELAYS": "true",
                "HERALD_REGISTRATIONS_PER_MINUTE": "1000"})
    log = open(work / "herald.log", "wb")
    server = subprocess.Popen([args.binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://{HOST}:{herald_port}"
    try:
        if not wait_for(lambda: _healthy(base), 60):
            raise SystemExit("herald serve did not answer /health")
        if not wait_for(lambda: _open(HOST, python_relay), 60):
            raise SystemExit("nostr-relay did not start")

        wallets = []
        for index in range(args.wallets):
            status, device = http("POST", f"{base}/api/v1/devices",
                                  {"platform": "android", "push_token": f"fcm-nwc-real-{index}-{os.urandom(4).hex()}"})
            node, service, app = coincurve.PrivateKey(), Keys.generate(), Keys.generate()
            webhook = device["webhook_url"]
            message = f"{webhook}-{service.public_key().to_hex()}-{app.public_key().to_hex()}-[{' '.join(relays)}]"
            status, text = http("POST", f"{base}/nwc/{node.public_key.format(compressed=True).hex()}", {
                "webhookUrl": webhook, "walletServicePubkey": service.public_key().to_hex(),
                "appPubkey": app.public_key().to_hex(), "relays": relays, "signature": ln_sign(node, message)}, raw=True)
            if status != 200:
                report.check(f"wallet {index} registers", False, f"{status} {text}")
            wallets.append((device, service, app))
        report.check(f"{args.wallets} wallets register their NWC keys on both relays", len(wallets) == args.wallets)

        def subscribed():
            _, metrics = http("GET", f"{base}/metrics", raw=True)
            lines = [line for line in metrics.splitlines() if line.startswith("herald_nwc_subscriptions{")]
            return len(lines) == 2 and all(not line.endswith(" 0") for line in lines) and lines
        report.check("Herald holds its subscriptions on both relays", bool(wait_for(subscribed, 30)))
        time.sleep(1)

        def publish(event_json: str, relay: str) -> list[str]:
            answers = []
            for relay in [relay]:
                with connect(direct[relay]) as socket_:
                    socket_.send(json.dumps(["EVENT", json.loads(event_json)]))
                    answers.append(socket_.recv(timeout=10))
            return answers

        sent: list[list[str]] = [[] for _ in wallets]
        for round_ in range(2):
            for index, (_, service, app) in enumerate(wallets):
                content = nip44_encrypt(app.secret_key(), service.public_key(),
                                        json.dumps({"method": "get_balance", "params": {}}), Nip44Version.V2)
                event = EventBuilder(Kind(23194), content).tags([Tag.public_key(service.public_key())]).finalize(app).as_json()
                # The first request on nostr-relay alone, the second on LocalRelay alone: a wallet
                # whose subscription either relay refused misses one.
                answers = publish(event, relays[round_])
                if not all('"OK"' in answer and "true" in answer for answer in answers):
                    report.check(f"the relays take wallet {index}'s request", False, str(answers))
                sent[index].append(event)

            def all_pushed():
                counts = []
                for device, _, _ in wallets:
                    _, feed = http("GET", f"{base}/api/v1/devices/{device['device_id']}/pushes?after=0&wait=0",
                                   bearer=device["device_secret"])
                    counts.append(len([p for p in feed.get("pushes", []) if p["payload"].get("notification_type") == "nwc_event"]))
                return counts if all(count >= round_ + 1 for count in counts) else None
            counts = wait_for(all_pushed, 60) or all_pushed()
            if counts is None:
                _, metrics = http("GET", f"{base}/metrics", raw=True)
                print("\n".join(line for line in metrics.splitlines() if "nwc" in line))
        events_ok = True
        counts = []
        for index, (device, _, _) in enumerate(wallets):
            _, feed = http("GET", f"{base}/api/v1/devices/{device['device_id']}/pushes?after=0&wait=0",
                           bearer=device["device_secret"])
            pushed = [json.loads(p["payload"]["notification_payload"])["event"] for p in feed.get("pushes", [])
                      if p["payload"].get("notification_type") == "nwc_event"]
            counts.append(len(pushed))
            # As the relay sent it (relays write their own JSON): the same event, field for field.
            events_ok &= sorted(json.dumps(json.loads(e), sort_keys=True) for e in pushed) == \
                sorted(json.dumps(json.loads(e), sort_keys=True) for e in sent[index])
        report.check(f"each of the {args.wallets} wallets' phones got its request on nostr-relay and its request on LocalRelay, once each",
                     counts == [2] * len(wallets), f"pushes per phone: {counts}")
        report.check("each push carries the event the app signed (as the relay wrote it)", events_ok)
        _, metrics = http("GET", f"{base}/metrics", raw=True)
        refused = [line for line in metrics.splitlines() if line.startswith("herald_nwc_subscriptions_refused_total")]
        report.check("no relay refused a subscription", not refused, str(refused))

        # rust-nostr's NWC client asks the sleeping development wallet for its balance on each relay.
        from nostr_sdk import NostrWalletConnect, NostrWalletConnectUri
        device = args.device or str(Path(args.binary).with_name("herald-device"))
        phone = work / "phone"
        device_env = dict(env, HERALD_TLS_CA_FILE=str(work / "cert.pem"), HERALD_NOSTR_ALLOW_PRIVATE_RELAYS="true")
        listen_log = open(work / "listen.log", "wb")
        listen = subprocess.Popen([device, "listen", "--server", base, "--wallet", str(phone)], env=device_env,
                                  stdout=listen_log, stderr=subprocess.STDOUT)
        try:
            if not wait_for(lambda: (phone / "registration.json").exists(), 60):
                raise SystemExit("herald-device listen did not register")
            connect_ = subprocess.run([device, "nwc", "connect", "--wallet", str(phone)]
                                      + [a for relay in relays for a in ("--relay", relay)],
                                      env=device_env, capture_output=True, text=True, timeout=60)
            connected = json.loads(connect_.stdout.strip().splitlines()[-1]) if connect_.returncode == 0 else {}
            report.check("herald-device nwc connect registers and publishes the info event", bool(connected.get("uri")),
                         connect_.stdout + connect_.stderr)
            for relay in relays:
                info = json.loads(_query(direct[relay], {"kinds": [13194], "authors": [connected.get("wallet_service_pubkey", "")]})
                                  or "null")
                report.check(f"the info event on {relay} lists the methods and nip44_v2 nip04",
                             bool(info) and info.get("content") == "get_info get_balance"
                             and ["encryption", "nip44_v2 nip04"] in info.get("tags", []), str(info)[:300])
                # The client reaches the same relay without TLS (it trusts only public roots).
                uri = connected.get("uri", "").split("?")[0] + "?relay=" + urllib.parse.quote(direct[relay], safe="") \
                    + "&secret=" + urllib.parse.parse_qs(connected.get("uri", "?").split("?", 1)[1]).get("secret", [""])[0]
                try:
                    balance = await asyncio.wait_for(NostrWalletConnect(NostrWalletConnectUri.parse(uri)).get_balance(), 60)
                    report.check(f"rust-nostr's NWC client gets the sleeping wallet's balance through {relay}",
                                 isinstance(getattr(balance, "balance", None), int), str(balance))
                except Exception as error:  # noqa: BLE001: reported as a failed check
                    report.check(f"rust-nostr's NWC client gets the sleeping wallet's balance through {relay}", False,
                                 f"{type(error).__name__}: {error}")
        finally:
            listen.terminate()
            listen.wait(10)
            listen_log.close()
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        relay_process.terminate()
        subprocess.run([nginx, "-c", str(work / "nginx.conf"), "-s", "stop"], capture_output=True)
        await local.shutdown() if asyncio.iscoroutinefunction(getattr(local, "shutdown", None)) else None
        log.close()
        relay_log.close()
    if report.failed:
        print("--- herald.log (tail)")
        print("\n".join((work / "herald.log").read_text(errors="replace").splitlines()[-30:]))
    elif not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


def _healthy(base: str) -> bool:
    try:
        return http("GET", f"{base}/health")[0] == 200
    except OSError:
        return False


def _query(url: str, filter_: dict) -> str | None:
    """The first event a relay holds for `filter_`, as JSON text."""
    from websockets.sync.client import connect
    with connect(url) as socket_:
        socket_.send(json.dumps(["REQ", "q", filter_]))
        while True:
            message = json.loads(socket_.recv(timeout=10))
            if message[0] == "EVENT":
                return json.dumps(message[2])
            if message[0] == "EOSE":
                return None


def _open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
