#!/usr/bin/env python3
"""Herald as deployed: nginx with deploy/nginx/herald.conf in front of a real `herald serve`.
Python 3.11, standard library only; needs nginx (Debian `nginx-light`) and openssl.

    python3 scripts/deployed.py --binary .build/debug/herald [--stream-seconds 65] [--keep]

The very file deploy/nginx/herald.conf is used; only what a deployment changes in it anyway is
substituted (the listen ports, the certificate, the upstream's port; the IPv6 listens are
dropped, as a CI machine may have no IPv6), each substitution checked to have happened once, so
the file cannot drift from what is tested. Herald runs with HERALD_TRUSTED_PROXIES=127.0.0.1,
as docs/deploying.md says. Phones connect from their own loopback addresses (all of 127/8 is
local), over TLS with HTTP/2 offered, many at once:

- 40 phones from 40 addresses register (40 x 201); one address is still limited by
  registrations_per_minute; an address a phone writes into X-Forwarded-For itself is not
  believed; a direct caller that is not a trusted proxy cannot choose its address with
  X-Forwarded-For or Forwarded;
- webhooks for every phone at once, each read by its phone on a long-polled device feed;
- an LNURL pay request held by nginx while the phone answers on its reply URL;
- held raw-token requests are counted per phone address, not per proxy;
- a presence stream held through nginx for --stream-seconds, then a wake reaches it as an event;
- the dashboard's session cookie is Secure through nginx;
- systemd-analyze verify accepts deploy/systemd/herald.service, where systemd is installed.

Ends with `N passed, M failed`; exit status 0 only when every check passed.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PER_MINUTE = 10
REPLY_TIMEOUT = 6


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail and not ok else ""), flush=True)
        return ok


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Answer:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> dict:
        try:
            return json.loads(self.body)
        except ValueError:
            return {}


class Edge:
    """Requests through nginx (TLS) or straight to Herald, from a chosen loopback address."""

    def __init__(self, tls_port: int, herald_port: int, cafile: Path) -> None:
        self.tls_port = tls_port
        self.herald_port = herald_port
        self.context = ssl.create_default_context(cafile=str(cafile))
        self.context.set_alpn_protocols(["http/1.1"])

    def request(
        self,
        method: str,
        path: str,
        source: str = "127.0.0.1",
        body: object | None = None,
        headers: dict[str, str] | None = None,
        direct: bool = False,
        timeout: float = 30,
    ) -> Answer:
        if direct:
            connection: http.client.HTTPConnection = http.client.HTTPConnection(
                "127.0.0.1", self.herald_port, timeout=timeout, source_address=(source, 0))
        else:
            connection = http.client.HTTPSConnection(
                "127.0.0.1", self.tls_port, timeout=timeout, source_address=(source, 0), context=self.context)
        headers = dict(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers.setdefault("Content-Type", "application/json")
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return Answer(response.status, response.headers, response.read())
        finally:
            connection.close()


def start_nginx(folder: Path, tls_port: int, http_port: int, herald_port: int) -> tuple[subprocess.CompletedProcess, Path]:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(folder / "key.pem"),
         "-out", str(folder / "cert.pem")],
        check=True, capture_output=True)
    text = (ROOT / "deploy/nginx/herald.conf").read_text()
    substitutions = [
        ("server 127.0.0.1:8080;", f"server 127.0.0.1:{herald_port};"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen [::]:80;", ""),
        ("listen 443 ssl http2;", f"listen 127.0.0.1:{tls_port} ssl http2;"),
        ("listen [::]:443 ssl http2;", ""),
        ("/etc/letsencrypt/live/your.domain/fullchain.pem", str(folder / "cert.pem")),
        ("/etc/letsencrypt/live/your.domain/privkey.pem", str(folder / "key.pem")),
    ]
    for old, new in substitutions:
        if text.count(old) != 1:
            raise SystemExit(f"deploy/nginx/herald.conf: expected '{old}' once, found it {text.count(old)} times")
        text = text.replace(old, new)
    (folder / "herald.conf").write_text(text)
    temp = folder / "nginx-tmp"
    temp.mkdir()
    user = "user root;\n" if os.geteuid() == 0 else ""
    (folder / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/nginx-error.log info;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\n  access_log {folder}/nginx-access.log;\n"
        + "".join(f"  {kind}_temp_path {temp}/{kind};\n" for kind in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"])
        + f"  include {folder}/herald.conf;\n}}\n")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    test = subprocess.run([nginx, "-t", "-c", str(folder / "nginx.conf"), "-e", str(folder / "nginx-error.log")],
                          capture_output=True, text=True)
    subprocess.run([nginx, "-c", str(folder / "nginx.conf"), "-e", str(folder / "nginx-error.log")], check=True)
    return test, nginx


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--stream-seconds", type=float, default=65)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    binary = str(Path(args.binary).resolve())
    report = Report()
    folder = Path(tempfile.mkdtemp(prefix="herald-deployed-"))
    os.chmod(folder, 0o755)
    herald_port, tls_port, http_port = free_port(), free_port(), free_port()
    nginx_test, nginx = start_nginx(folder, tls_port, http_port, herald_port)
    report.check("nginx -t accepts deploy/nginx/herald.conf", nginx_test.returncode == 0, nginx_test.stderr)
    database = folder / "herald.sqlite"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
    env.update({
        "HERALD_DATABASE": str(database),
        "HERALD_PORT": str(herald_port),
        "HERALD_PUBLIC_URL": f"https://127.0.0.1:{tls_port}",
        "HERALD_TRUSTED_PROXIES": "127.0.0.1",
        "HERALD_REGISTRATIONS_PER_MINUTE": str(PER_MINUTE),
        "HERALD_REPLY_TIMEOUT": str(REPLY_TIMEOUT),
    })

    def key(name: str, scope: str) -> str:
        return subprocess.run([binary, "keys", "create", "--name", name, "--scopes", scope], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    wake_key = key("lsp", "wake")
    admin_key = key("operator", "admin")
    log = open(folder / "server.log", "wb")
    server = subprocess.Popen([binary, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    edge = Edge(tls_port, herald_port, folder / "cert.pem")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=64)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if edge.request("GET", "/health", timeout=2).status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("herald did not become healthy through nginx")
            time.sleep(0.2)

        # HTTP/2 to clients: the ALPN answer of the TLS handshake.
        h2 = ssl.create_default_context(cafile=str(folder / "cert.pem"))
        h2.set_alpn_protocols(["h2", "http/1.1"])
        with socket.create_connection(("127.0.0.1", tls_port)) as raw, h2.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            report.check("nginx offers HTTP/2 to clients", tls.selected_alpn_protocol() == "h2", str(tls.selected_alpn_protocol()))

        # 40 phones from 40 addresses register at once.
        def register(source: str, index: int, headers: dict[str, str] | None = None, direct: bool = False) -> Answer:
            token = f"{index:064x}"
            return edge.request("POST", "/api/v1/devices", source=source, body={"platform": "ios", "push_token": token},
                                headers=headers, direct=direct)

        phones = list(pool.map(lambda i: register(f"127.0.0.{10 + i}", 0xD0000 + i), range(40)))
        statuses = [answer.status for answer in phones]
        report.check("40 phones from 40 addresses register through nginx at once: 40 x 201",
                     statuses.count(201) == 40, str(statuses))
        devices = [answer.json() for answer in phones]

        # The stream is opened early and held while the rest runs.
        stream_lines: list[str] = []
        stream_state = {"opened": None, "error": None}
        holder = devices[2]

        def hold_stream() -> None:
            try:
                connection = http.client.HTTPSConnection("127.0.0.1", tls_port, timeout=args.stream_seconds + 60,
                                                         source_address=("127.0.0.12", 0), context=edge.context)
                connection.request("GET", f"/api/v1/devices/{holder['device_id']}/presence/stream",
                                   headers={"Authorization": f"Bearer {holder['device_secret']}"})
                response = connection.getresponse()
                stream_state["opened"] = time.monotonic()
                stream_state["status"] = response.status
                while True:
                    line = response.fp.readline()
                    if not line:
                        break
                    stream_lines.append(line.decode().rstrip("\n"))
                    if line.startswith(b"data:") and any(l.startswith("event: wake") for l in stream_lines):
                        break
                connection.close()
            except Exception as error:  # noqa: BLE001: reported as a failed check
                stream_state["error"] = repr(error)

        stream_thread = threading.Thread(target=hold_stream, daemon=True)
        stream_thread.start()

        # One address is still limited; what a phone writes itself is not believed.
        one = list(pool.map(lambda i: register("127.0.0.60", 0xE0000 + i), range(PER_MINUTE + 3)))
        codes = [answer.status for answer in one]
        report.check(f"one address, {PER_MINUTE + 3} at once: {PER_MINUTE} x 201, then 429 rate_limited with Retry-After",
                     codes.count(201) == PER_MINUTE and codes.count(429) == 3
                     and all(a.json().get("error") == "rate_limited" and a.headers.get("Retry-After") for a in one if a.status == 429),
                     str(codes))
        spoofed = list(pool.map(lambda i: register("127.0.0.61", 0xE1000 + i, {"X-Forwarded-For": f"198.51.100.{i}"}),
                                range(PER_MINUTE + 3)))
        codes = [answer.status for answer in spoofed]
        report.check("an address a phone writes into X-Forwarded-For is not believed (nginx appends the real one)",
                     codes.count(201) == PER_MINUTE and codes.count(429) == 3, str(codes))
        forwarded = list(pool.map(lambda i: register("127.0.0.61", 0xE2000 + i, {"Forwarded": f"for=198.51.100.{i}"}),
                                  range(3)))
        report.check("nor one it writes into Forwarded", [a.status for a in forwarded] == [429] * 3,
                     str([a.status for a in forwarded]))
        direct = list(pool.map(
            lambda i: register("127.0.0.62", 0xE3000 + i,
                               {"X-Forwarded-For": f"203.0.113.{i}"} if i % 2 else {"Forwarded": f"for=203.0.113.{i}"},
                               direct=True),
            range(PER_MINUTE + 3)))
        codes = [answer.status for answer in direct]
        report.check("a direct caller that is not a trusted proxy cannot choose its address with either header",
                     codes.count(201) == PER_MINUTE and codes.count(429) == 3, str(codes))

        # A webhook for every phone at once, each read on its long-polled feed.
        def feed(device: dict, after: int = 0, wait: int = 20) -> Answer:
            return edge.request("GET", f"/api/v1/devices/{device['device_id']}/pushes?wait={wait}&after={after}",
                                headers={"Authorization": f"Bearer {device['device_secret']}"}, timeout=wait + 10)

        feeds = [pool.submit(feed, device) for device in devices[3:]]
        time.sleep(1)
        hooks = list(pool.map(
            lambda item: edge.request(
                "POST", f"/api/v1/notify?platform=ios&token={item[1]['alias']}", source=f"127.0.1.{item[0]}",
                body={"event": "swap.update", "data": {"id": f"swap-{item[0]}", "status": "transaction.mempool"}}),
            enumerate(devices[3:])))
        report.check(f"{len(hooks)} webhooks at once through nginx: each 200 with a job id",
                     all(h.status == 200 and h.json().get("id") for h in hooks), str([h.status for h in hooks]))
        got = [f.result() for f in feeds]
        delivered = [
            any(p.get("payload", {}).get("notification_type") == "swap_updated"
                and json.loads(p["payload"]["notification_payload"]).get("id") == f"swap-{i}"
                for p in answer.json().get("pushes", []))
            for i, answer in enumerate(got)]
        report.check("each phone's long-polled feed, held by nginx, returns its push", all(delivered),
                     f"{delivered.count(True)} of {len(delivered)}")

        # An LNURL pay request held by nginx while the phone answers.
        alice = devices[0]
        claim = edge.request("POST", "/api/v1/lnurlpay", source="127.0.0.10",
                             body={"device_id": alice["device_id"], "username": "alice"},
                             headers={"Authorization": f"Bearer {alice['device_secret']}"})
        report.check("the phone claims alice through nginx", claim.status == 201, claim.body.decode(errors="replace"))
        started = time.monotonic()
        payer = pool.submit(edge.request, "GET", "/.well-known/lnurlp/alice", "127.0.2.1")
        pushed = feed(alice, wait=15).json().get("pushes", [])
        info = next((p for p in pushed if p["payload"].get("notification_type") == "lnurlpay_info"), None)
        if report.check("the payer's request pushes lnurlpay_info to the phone", info is not None, str(pushed)[:300]):
            request = json.loads(info["payload"]["notification_payload"])
            time.sleep(2)  # the phone takes its time: the payer's request stays held
            metadata = json.dumps([["text/plain", "Pay alice"], ["text/identifier", request.get("identifier", "")]])
            reply = edge.request("POST", request["reply_url"].split(str(tls_port), 1)[1], source="127.0.0.10",
                                 body={"callback": request["callback_url"], "minSendable": 1000, "maxSendable": 1000000,
                                       "metadata": metadata, "tag": "payRequest"})
            report.check("the phone answers on its reply URL through nginx", reply.status in (200, 204), str(reply.status))
            answer = payer.result()
            report.check("the payer, held by nginx while the phone answered, gets the phone's answer",
                         answer.status == 200 and answer.json().get("tag") == "payRequest" and time.monotonic() - started >= 2,
                         f"{answer.status} {answer.body[:200]!r}")

        # Held raw-token requests are shared per phone address, not per proxy.
        def raw_token_request(source: str, index: int) -> Answer:
            return edge.request("POST", f"/api/v1/notify?platform=ios&token={0xF1000 + index:064x}", source=source,
                                body={"template": "lnurlpay_info", "data": {"callback_url": "https://example.com/cb"}},
                                timeout=REPLY_TIMEOUT + 20)

        flood = [pool.submit(raw_token_request, "127.0.0.70", i) for i in range(20)]
        time.sleep(2)
        other = pool.submit(raw_token_request, "127.0.0.71", 99)
        flooded = [f.result() for f in flood]
        codes = [a.status for a in flooded]
        report.check("one address holds 16 raw-token requests at most: the rest 429 too_many_held_requests",
                     codes.count(504) == 16 and codes.count(429) == 4
                     and all(a.json().get("error") == "too_many_held_requests" for a in flooded if a.status == 429), str(codes))
        other_answer = other.result()
        report.check("while another address behind the same proxy is still held (504 after the reply timeout, not 429)",
                     other_answer.status == 504, str(other_answer.status))

        # The dashboard's session cookie through nginx (Secure: public_url is https, and so is
        # X-Forwarded-Proto; the Swift suite tells the two apart).
        through = edge.request("POST", "/admin/login", body=f"key={admin_key}",
                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        report.check("the dashboard's login through nginx sets a Secure session cookie",
                     through.status == 303 and "; Secure" in (through.headers.get("Set-Cookie") or ""),
                     f"{through.status} {through.headers.get('Set-Cookie')}")

        # The presence stream, held for --stream-seconds, then a wake reaches it as an event.
        while stream_state["opened"] is None and stream_state["error"] is None and stream_thread.is_alive():
            time.sleep(0.1)
        if stream_state["opened"] is not None:
            time.sleep(max(0.0, args.stream_seconds - (time.monotonic() - stream_state["opened"])))
        held = time.monotonic() - (stream_state["opened"] or time.monotonic())
        keepalives = stream_lines.count(": keep-alive")
        report.check(f"a presence stream stays open through nginx for {args.stream_seconds:.0f} s, with keep-alive lines",
                     stream_state["error"] is None and stream_state.get("status") == 200 and stream_thread.is_alive()
                     and held >= args.stream_seconds and keepalives >= int(args.stream_seconds // 15) - 1,
                     f"error {stream_state['error']}, held {held:.1f} s, {keepalives} keep-alives")
        wake = edge.request("POST", "/api/v1/wake", source="127.0.3.1",
                            body={"device": holder["device_id"], "kind": "incomingHtlc", "payment_hash": "ab" * 32,
                                  "amount_msat": 250000, "expires_at": int(time.time()) + 600},
                            headers={"Authorization": f"Bearer {wake_key}"})
        report.check("a wake for the present phone is not pushed", wake.status == 200 and wake.json().get("reason") == "present",
                     f"{wake.status} {wake.body[:200]!r}")
        stream_thread.join(10)
        report.check("and reaches its held stream as an event", any(l == "event: wake" for l in stream_lines)
                     and any(l.startswith("data:") and "ab" * 32 in l for l in stream_lines), str(stream_lines[-4:]))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        pid = (folder / "nginx.pid")
        if pid.exists():
            subprocess.run([nginx, "-c", str(folder / "nginx.conf"), "-s", "stop"], capture_output=True)
        log.close()

    # The unit, checked where systemd is installed; its ExecStart names this build's binary.
    analyze = shutil.which("systemd-analyze")
    if analyze:
        unit = (ROOT / "deploy/systemd/herald.service").read_text()
        if report.check("the unit runs /usr/local/bin/herald serve", unit.count("ExecStart=/usr/local/bin/herald serve\n") == 1):
            (folder / "herald.service").write_text(unit.replace("/usr/local/bin/herald", binary))
            verify = subprocess.run([analyze, "verify", str(folder / "herald.service")], capture_output=True, text=True)
            report.check("systemd-analyze verify accepts deploy/systemd/herald.service",
                         verify.returncode == 0 and not verify.stderr.strip(), verify.stderr)
    else:
        print("SKIP  systemd-analyze verify: systemd is not installed")

    if report.failed:
        print("--- server.log (tail)")
        print("\n".join((folder / "server.log").read_text(errors="replace").splitlines()[-30:]))
        print("--- nginx-error.log (tail)")
        print("\n".join((folder / "nginx-error.log").read_text(errors="replace").splitlines()[-20:]))
    elif not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{report.passed} passed, {report.failed} failed")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
