#!/usr/bin/env python3
"""Hostile-traffic tests for Herald's NDS (`herald serve`). Python 3.11, standard library only.

Each subcommand starts its own server (a copy of --binary, a temporary database, a free
loopback port, the local development provider), attacks it, prints what it saw and ends with
a line `N passed, M failed` counting checks. The exit status is 0 only when every check passed.

    python3 scripts/hostile.py fuzz  --binary .build/debug/herald [--seed S] [--cases 3000]
                                     [--concurrency 32] [--timeout 15]
    python3 scripts/hostile.py crash --binary .build/debug/herald [--cycles 10] [--rate 500] [--busy 3]
                                     [--max-duplicate-share 0.01]
    python3 scripts/hostile.py all   --binary .build/debug/herald      # bounded, for CI

fuzz   sends seeded random requests over raw sockets (invalid HTTP included) to every route:
       malformed, truncated, huge and deeply nested JSON, NUL bytes, lone surrogates, invalid
       UTF-8, odd methods, paths, queries and headers, bad chunked framing, pipelining, wrong
       bearer secrets and API keys, bad Idempotency-Keys. A helper thread plays the phone: it
       reads the local push feed of the registered devices and answers their reply URLs (with
       good and bad answers). Checks: no 5xx other than 502/503/504, every request answered or
       closed within --timeout, server alive, /health 200 within 1 s, a last valid webhook is
       acknowledged and delivered, SIGTERM stops the server within 10 s.
       Repeat a run with the printed --seed; replay single cases with --only 17,42.

crash  sends valid webhooks with unique ids at --rate per second, kill -9s the server at random
       moments --cycles times and restarts it on the same database, then lets the outbox drain
       and checks that every acknowledged (200) webhook was pushed at least once (the local
       provider's `local_push` table), reporting the share pushed more than once.

The server's output goes to server.log in the temporary folder; its tail is printed when a
check fails. The folder is removed after a passing run unless --keep is given.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ALLOWED_5XX = {502, 503, 504}
HOST = "127.0.0.1"


# ---------------------------------------------------------------------------------------------
# Checks


@dataclass
class Report:
    """Named pass/fail checks; the last line printed is `N passed, M failed`."""

    passed: int = 0
    failed: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(name)
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok

    def merge(self, other: Report) -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.failures += other.failures

    def finish(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 0 if self.failed == 0 else 1


# ---------------------------------------------------------------------------------------------
# The server under test


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class HeraldServer:
    """One `herald serve` process at a time on a fixed database and port, logging to a file."""

    def __init__(self, binary: Path, workdir: Path, reply_timeout: int | None = None, log_level: str = "info",
                 extra: list[str] | None = None):
        self.extra = extra or []
        self.binary = binary
        self.database = workdir / "herald.sqlite"
        self.log_path = workdir / "server.log"
        self.port = free_port()
        self.reply_timeout = reply_timeout
        self.log_level = log_level
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        cmd = [str(self.binary), "serve", "--host", HOST, "--port", str(self.port),
               "--database", str(self.database), "--log-level", self.log_level,
               # The runs push a few phones far past the per-target limit on purpose: lift it,
               # so they exercise the pipeline rather than the 429 path.
               "--target-pushes-per-minute", "100000000", "--target-push-burst", "100000000"]
        if self.reply_timeout is not None:
            cmd += ["--reply-timeout", str(self.reply_timeout)]
        return cmd + self.extra

    def start(self, healthy_within: float = 30.0) -> bool:
        """Starts the server and waits for /health; tries other ports if this one is taken."""
        for attempt in range(3):
            self.starts += 1
            with open(self.log_path, "ab") as log:
                log.write(f"\n==== start #{self.starts} port {self.port} at {time.strftime('%X')}\n".encode())
                log.flush()
                # Push credentials in the environment would replace the local provider.
                env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")}
                self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env)
            if self.wait_healthy(healthy_within):
                return True
            if self.alive() or "in use" not in self.log_tail(5).lower():
                return False
            time.sleep(0.2 * (attempt + 1))  # the port is still held: wait, then take another
            if attempt:
                self.port = free_port()
        return False

    def wait_healthy(self, within: float) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            status = simple_request(self.port, "GET", "/health", timeout=1.0).status
            if status == 200:
                return True
            time.sleep(0.05)
        return False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        if self.proc and self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def terminate(self, within: float = 10.0) -> tuple[bool, float, int | None]:
        """SIGTERM; returns (exited in time, seconds taken, exit code). Kills it if too slow."""
        if not self.proc:
            return False, 0.0, None
        if not self.alive():
            return True, 0.0, self.proc.returncode
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=within)
            return True, time.monotonic() - started, code
        except subprocess.TimeoutExpired:
            self.kill9()
            return False, time.monotonic() - started, None

    def stop_quietly(self) -> None:
        if self.alive():
            self.kill9()

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the log before any crash backtrace (see crash_report), without the
        one-per-push lines of the local provider."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        for number, line in enumerate(text):
            if "Fatal error" in line or line.startswith("*** Signal"):
                text = text[:number + 1]
                break
        return "\n".join([line for line in text if "] local push" not in line][-lines:])

    def crash_report(self, frames: int = 8) -> str:
        """The fatal error and the top of the crashed thread's backtrace, if the log has one."""
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        out = []
        for number, line in enumerate(text):
            if "Fatal error" in line or "Program crashed" in line:
                out.append(line)
            elif re.match(r"Thread \d+ .*crashed:", line):
                out += [line] + [frame[:200] for frame in text[number + 1:number + 2 + frames] if frame.strip()]
        return ("server crash:\n  " + "\n  ".join(out)) if out else ""

    def print_log_tail(self, lines: int = 40) -> None:
        print(f"---- last {lines} lines of {self.log_path} (local push lines left out) ----")
        print(self.log_tail(lines))
        print("---- end of server log ----", flush=True)

    def create_api_key(self) -> str | None:
        """An admin API key made with `herald keys create` on the server's database."""
        try:
            out = subprocess.run(
                [str(self.binary), "keys", "create", "--name", "hostile", "--scopes", "admin",
                 "--database", str(self.database)],
                capture_output=True, timeout=30, check=True, stdin=subprocess.DEVNULL,
            )
        except (subprocess.SubprocessError, OSError):
            return None
        secret = out.stdout.decode(errors="replace").strip()
        return secret or None


def prepare_workdir(binary: str, keep: bool) -> tuple[Path, Path]:
    """A temporary folder holding a copy of the binary, so a rebuild mid-run changes nothing."""
    source = Path(binary)
    if not source.is_file() or not os.access(source, os.X_OK):
        sys.exit(f"not an executable file: {binary}")
    workdir = Path(tempfile.mkdtemp(prefix="herald-hostile-"))
    copy = workdir / "herald"
    shutil.copy2(source, copy)
    print(f"work folder: {workdir}{' (kept)' if keep else ''}", flush=True)
    return workdir, copy


def open_readonly(database: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)


def job_states(database: Path) -> dict[str, int]:
    with open_readonly(database) as db:
        return dict(db.execute("SELECT state, COUNT(*) FROM job GROUP BY state").fetchall())


# ---------------------------------------------------------------------------------------------
# HTTP over raw sockets


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class Exchange:
    """What one connection got: its responses and how it ended."""

    responses: list[HttpResponse]
    outcome: str  # answered | closed | timeout | connect failed | garbled
    elapsed: float


class Garbled(Exception):
    pass


def parse_response(buf: bytes, head: bool, eof: bool) -> tuple[HttpResponse | None, int]:
    """One response from the front of buf, with the bytes it used; (None, 0) if incomplete."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        if not (buf.startswith(b"HTTP/") or b"HTTP/".startswith(buf)) or len(buf) > 1 << 20:
            raise Garbled(buf[:80])
        return None, 0
    lines = buf[:end].decode("latin-1").split("\r\n")
    match = re.match(r"HTTP/\d\.\d (\d{3})", lines[0])
    if not match:
        raise Garbled(lines[0][:80])
    status = int(match.group(1))
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    start = end + 4
    if head or status in (204, 304) or 100 <= status < 200:
        return HttpResponse(status, headers, b""), start
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, pos = b"", start
        while True:
            line_end = buf.find(b"\r\n", pos)
            if line_end < 0:
                return None, 0
            try:
                size = int(buf[pos:line_end].split(b";")[0].strip(), 16)
            except ValueError as error:
                raise Garbled(b"bad chunk size") from error
            if size == 0:
                trailer_end = buf.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    return None, 0
                return HttpResponse(status, headers, body), trailer_end + 4
            if len(buf) < line_end + 2 + size + 2:
                return None, 0
            body += buf[line_end + 2:line_end + 2 + size]
            pos = line_end + 2 + size + 2
    if "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError as error:
            raise Garbled(b"bad content-length") from error
        if len(buf) < start + length:
            return None, 0
        return HttpResponse(status, headers, buf[start:start + length]), start + length
    if eof:
        return HttpResponse(status, headers, buf[start:]), len(buf)
    return None, 0


def exchange(port: int, pieces: list[bytes], *, expected: int = 1, heads: list[bool] | None = None,
             half_close: bool = False, pause: float = 0.0, timeout: float = 15.0) -> Exchange:
    """Sends pieces on a new connection (pause seconds apart), then reads up to `expected`
    final responses (1xx are skipped) until the connection closes or `timeout` passes."""
    heads = heads or [False] * expected
    started = time.monotonic()
    deadline = started + timeout
    responses: list[HttpResponse] = []

    def done(outcome: str) -> Exchange:
        if outcome == "closed" and len(responses) >= expected:
            outcome = "answered"
        return Exchange(responses, outcome, time.monotonic() - started)

    try:
        sock = socket.create_connection((HOST, port), timeout=min(timeout, 5.0))
    except OSError:
        return done("connect failed")
    with sock:
        try:
            for index, piece in enumerate(pieces):
                if index and pause:
                    time.sleep(pause)
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                sock.sendall(piece)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except TimeoutError:
            return done("timeout")
        except OSError:
            pass  # the server may answer (413) and close before reading everything: read on
        buf, eof = b"", False
        while True:
            try:
                while len(responses) < expected:
                    response, used = parse_response(buf, heads[min(len(responses), len(heads) - 1)], eof)
                    if response is None:
                        break
                    buf = buf[used:]
                    if not 100 <= response.status < 200 or response.status == 101:
                        responses.append(response)
                        if response.status == 101:
                            return done("answered")
            except Garbled:
                return done("garbled")
            if len(responses) >= expected:
                return done("answered")
            if eof:
                return done("closed")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return done("timeout")
            sock.settimeout(remaining)
            try:
                data = sock.recv(65536)
            except TimeoutError:
                return done("timeout")
            except OSError:
                data = b""
            if data:
                buf += data
            else:
                eof = True


def build_request(method: str, target: str, headers: list[tuple[str, str | bytes]], body: bytes = b"",
                  version: str = "HTTP/1.1", host: bool = True, length: bool = True) -> bytes:
    lines = [f"{method} {target} {version}".encode("latin-1")]
    if host:
        lines.append(f"Host: {HOST}".encode())
    for name, value in headers:
        lines.append(name.encode("latin-1") + b": " + (value if isinstance(value, bytes) else value.encode()))
    if length and (body or method in ("POST", "PUT", "PATCH")):
        lines.append(f"Content-Length: {len(body)}".encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


@dataclass
class SimpleResult:
    status: int | None
    body: bytes
    outcome: str


def simple_request(port: int, method: str, path: str, body: object = None, *, bearer: str | None = None,
                   headers: list[tuple[str, str | bytes]] | None = None, timeout: float = 10.0) -> SimpleResult:
    """A well-formed request (a JSON body if given); status None when there was no answer."""
    all_headers = list(headers or [])
    payload = b""
    if body is not None:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        all_headers.append(("Content-Type", "application/json"))
    if bearer is not None:
        all_headers.append(("Authorization", f"Bearer {bearer}"))
    all_headers.append(("Connection", "close"))
    result = exchange(port, [build_request(method, path, all_headers, payload)], timeout=timeout)
    if result.responses:
        return SimpleResult(result.responses[0].status, result.responses[0].body, result.outcome)
    return SimpleResult(None, b"", result.outcome)


def valid_webhook(token: str, swap_id: str, platform: str = "android") -> tuple[str, dict]:
    path = f"/api/v1/notify?platform={platform}&token={token}"
    return path, {"event": "swap.update", "data": {"id": swap_id, "status": "transaction.mempool"}}


# ---------------------------------------------------------------------------------------------
# Fuzz: fixtures and cases


@dataclass
class Device:
    id: str
    secret: str
    alias: str
    platform: str


@dataclass
class Fixtures:
    """Real things on the server, so hostile requests also reach past the first lookup."""

    devices: list[Device]
    username: str | None
    api_key: str | None


@dataclass
class Case:
    index: int
    kind: str
    pieces: list[bytes]
    expected: int = 1
    heads: list[bool] | None = None
    half_close: bool = False  # for requests the server cannot finish: it must close on EOF
    pause: float = 0.0

    def preview(self) -> str:
        data = b"".join(self.pieces)
        return repr(data[:160]) + (f"... ({len(data)} bytes)" if len(data) > 160 else "")


@dataclass
class Spec:
    """A request before serialization, for mutations to bend."""

    method: str
    path: str
    query: str = ""
    headers: list[tuple[str, str | bytes]] = field(default_factory=list)
    body: bytes = b""
    version: str = "HTTP/1.1"
    framing: str = "length"  # length | chunked | none
    half_close: bool = False
    tags: list[str] = field(default_factory=list)

    def target(self) -> str:
        return self.path + (f"?{self.query}" if self.query else "")

    def serialize(self, rng: random.Random) -> bytes:
        if self.framing == "chunked":
            headers = self.headers + [("Transfer-Encoding", "chunked")]
            return build_request(self.method, self.target(), headers, chunked(self.body, rng), self.version,
                                 length=False)
        return build_request(self.method, self.target(), self.headers, self.body, self.version,
                             length=self.framing == "length")


def chunked(body: bytes, rng: random.Random) -> bytes:
    out, pos = b"", 0
    while pos < len(body):
        size = min(len(body) - pos, rng.randint(1, len(body) // 3 + 1))
        out += f"{size:x}\r\n".encode() + body[pos:pos + size] + b"\r\n"
        pos += size
    return out + b"0\r\n\r\n"


def rand_text(rng: random.Random, low: int = 1, high: int = 24) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789-_") for _ in range(rng.randint(low, high)))


SWAP_STATUSES = ["transaction.mempool", "transaction.confirmed", "invoice.paid", "swap.expired", ""]
METHODS_ODD = ["PATCH", "OPTIONS", "HEAD", "TRACE", "CONNECT", "DELETE", "PUT", "GET", "FOO", "get",
               "P\x00ST", "M" * 300, "POST /x", "PRI", "\u00e9", ""]


def json_body(rng: random.Random, value: object) -> bytes:
    return json.dumps(value, separators=(",", ":") if rng.random() < 0.5 else None).encode()


def webhook_body(rng: random.Random, fx: Fixtures, server_url: str) -> object:
    reply = {"reply_url": f"{server_url}/api/v1/reply/{uuid.uuid4().hex}"} if rng.random() < 0.5 else {}
    choice = rng.randrange(12)
    if choice < 4:
        return {"event": "swap.update", "data": {"id": rand_text(rng), "status": rng.choice(SWAP_STATUSES)}}
    if choice == 4:
        return {"event": "invoice.request", "data": {"offer": "lno1" + rand_text(rng), "invoiceRequest": "lnr1x", **reply}}
    if choice == 5:
        return {"template": "lnurlpay_info", "data": {"callback_url": "https://x.example/cb", **reply}}
    if choice == 6:
        return {"template": "lnurlpay_invoice", "data": {"amount": rng.choice([1000, -1, 0, 2**63, 1.5]),
                                                         "verify_url": "https://x/{payment_hash}", **reply}}
    if choice == 7:
        return {"template": "lnurlpay_verify", "data": {"payment_hash": rand_text(rng, 64, 64), **reply}}
    if choice == 8:
        return {"event": rand_text(rng, 1, rng.choice([10, 300])), "data": {rand_text(rng): rand_text(rng)}}
    if choice == 9:
        return {"event": "swap.update", "data": {"id": "x", "status": "s", "blob": "A" * rng.choice([3000, 5000, 30000])}}
    if choice == 10:
        return rng.choice([{}, [], {"event": 5}, {"template": None, "data": {}}, {"event": "x", "data": []},
                           {"event": "swap.update"}, {"event": "swap.update", "data": {"id": 1}}, "text", 7, None])
    return {"event": "swap.update", "data": {"id": "n", "status": "s", "n": rng.choice([
        2**53, 2**64, -(2**63) - 1, 1e308, 9007199254740993.5, 0.1, -0.0])}}


def route_webhook(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    params = []
    if rng.random() < 0.9:
        params.append(("platform", rng.choice(["ios", "android", "IOS", "windows", ""])))
    token_choice = rng.random()
    if token_choice < 0.3 and fx.devices:
        params.append(("token", rng.choice(fx.devices).alias))
    elif token_choice < 0.9:
        params.append(("token", "hostile" + rand_text(rng)))
    if rng.random() < 0.2:
        params.append(("app_data", rand_text(rng, 1, 200)))
    rng.shuffle(params)
    headers: list[tuple[str, str | bytes]] = [("Content-Type", "application/json")]
    if rng.random() < 0.3:
        headers.append(("Idempotency-Key", rand_text(rng, 1, 40)))
    return Spec("POST", "/api/v1/notify", "&".join(f"{k}={v}" for k, v in params), headers,
                json_body(rng, webhook_body(rng, fx, url)), tags=["webhook"])


def device_auth(rng: random.Random, fx: Fixtures, target_id: str) -> list[tuple[str, str | bytes]]:
    """A wrong (or missing) device secret for `target_id`: never its own secret, which could
    delete or change a fixture device."""
    wrong = rng.choice([None, "Bearer", "Bearer ", "Bearer wrong", "Bearer " + "s" * 10000, "Basic dXNlcjpwYXNz",
                        b"Bearer \xff\xfe\x00", "bearer  " + uuid.uuid4().hex, "Bearer\t" + uuid.uuid4().hex])
    if fx.devices and rng.random() < 0.3:
        device = rng.choice(fx.devices)
        if device.id == target_id:  # its own secret, bent
            wrong = "Bearer " + rng.choice([device.secret + "x", device.secret + " junk", device.secret[:-1],
                                            device.secret.swapcase()])
        else:  # another device's secret
            wrong = "Bearer " + device.secret
    return [] if wrong is None else [("Authorization", wrong)]


def device_id(rng: random.Random, fx: Fixtures) -> str:
    if fx.devices and rng.random() < 0.7:
        return rng.choice(fx.devices).id
    return rng.choice([str(uuid.uuid4()), "x", "%00", "a" * 3000, "..", "%2e%2e", "\u00e9".encode().decode("latin-1")])


def route_devices(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    kind = rng.randrange(4)
    if kind == 0:
        body = {"platform": rng.choice(["ios", "android", "x"]), "push_token": rand_text(rng, 0, 80)}
        return Spec("POST", "/api/v1/devices", "", [("Content-Type", "application/json")], json_body(rng, body),
                    tags=["devices"])
    ident = device_id(rng, fx)
    if kind == 1:
        return Spec("PUT", f"/api/v1/devices/{ident}", "", device_auth(rng, fx, ident),
                    json_body(rng, {"push_token": rand_text(rng)}), tags=["devices"])
    if kind == 2:
        return Spec("DELETE", f"/api/v1/devices/{ident}", "", device_auth(rng, fx, ident), tags=["devices"])
    # The push feed is read-only, so it also gets the right secret, with odd long-poll values.
    # (No `wait` above the fuzz timeout: a long poll of up to 30 s is the feed's normal behaviour.)
    auth = device_auth(rng, fx, ident)
    own = [device for device in fx.devices if device.id == ident]
    if own and rng.random() < 0.4:
        auth = [("Authorization", "Bearer " + own[0].secret)]
    after = rng.choice(["0", "-1", "x", "99999999999999999999", "9223372036854775807", "1.5"])
    wait = rng.choice(["0", "1", "-5", "nan", "-inf", "1e-300", "x", "", "0x1"])  # Swift reads hex
    return Spec("GET", f"/api/v1/devices/{ident}/pushes", f"after={after}&wait={wait}", auth, tags=["devices"])


def route_reply(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    ident = rng.choice([uuid.uuid4().hex, "", "x" * 65, "x" * 64, "%2F", rand_text(rng)])
    return Spec("POST", f"/api/v1/reply/{ident}", "", [("Content-Type", "application/json")],
                json_body(rng, rng.choice([{"invoice": "lni1x"}, {"status": "ERROR", "reason": "x"}, [], "x"])),
                tags=["reply"])


def route_lightning(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    name = fx.username if fx.username and rng.random() < 0.5 else rng.choice(
        [rand_text(rng), "ALICE", "a" * 65, "%00", "..", "a b", "\u00e9".encode().decode("latin-1")])
    kind = rng.randrange(5)
    if kind == 0:
        return Spec("GET", f"/.well-known/lnurlp/{name}", tags=["lnurlp"])
    if kind == 1:
        query = "&".join(rng.sample([f"amount={rng.choice(['1000', '0', '-1', 'x', '1' * 30, '21000'])}",
                                     f"comment={rand_text(rng, 0, 400)}", "amount=5", "nostr=%7B%7D"], rng.randint(0, 3)))
        return Spec("GET", f"/lnurlp/{name}/callback", query, tags=["lnurlp"])
    if kind == 2:
        return Spec("GET", f"/lnurlp/{name}/verify/{rng.choice([rand_text(rng, 64, 64), 'zz', '0' * 64, 'A' * 500])}",
                    tags=["lnurlp"])
    body = {"device_id": device_id(rng, fx), "username": rand_text(rng)}
    method = "POST" if kind == 3 else "DELETE"
    query_id = device_id(rng, fx) if method == "DELETE" and rng.random() < 0.5 else None
    auth = device_auth(rng, fx, query_id or body["device_id"])
    return Spec(method, "/api/v1/lnurlpay", f"device_id={query_id}" if query_id else "",
                [("Content-Type", "application/json")] + auth, json_body(rng, body), tags=["lnurlpay"])


def route_backend(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    user = rng.choice(["user-42", rand_text(rng), "a" * 129, "a:b", "%20", "\u00e9".encode().decode("latin-1")])
    session = rng.choice(["sess-1", rand_text(rng), "a" * 200])
    key = rng.choice([None, "Bearer hk_" + uuid.uuid4().hex, "Bearer ", "Bearer " + "k" * 5000, "Token x"])
    if fx.api_key and rng.random() < 0.3:
        key = "Bearer " + fx.api_key
    headers: list[tuple[str, str | bytes]] = [("Content-Type", "application/json")]
    if key:
        headers.append(("Authorization", key))
    kind = rng.randrange(5)
    if kind == 0:
        return Spec("GET", f"/api/v1/users/{user}/sessions", "", headers, tags=["backend"])
    if kind == 1:
        body = {"allow_notifications": rng.choice([True, False, "yes"]), "platform": rng.choice(["ios", "android", 1]),
                "push_token": rand_text(rng, 0, 60)}
        return Spec(rng.choice(["PUT", "PATCH", "DELETE"]), f"/api/v1/users/{user}/sessions/{session}", "", headers,
                    json_body(rng, body), tags=["backend"])
    if kind == 2:
        body = {"action": rng.choice(["DEPOSIT_RECEIVED", "WITHDRAWAL_PROCESSED", "NONE", rand_text(rng)]),
                "data": {"transaction_id": "t", "amount": rng.choice(["100.00", 1.5, "x"]), "asset": "USDC",
                         "network": "base", "nested": rng.choice([{}, [1], 7, True])},
                "notification": {"title": "t", "body": "b" * rng.choice([5, 5000])}}
        return Spec("POST", f"/api/v1/users/{user}/events", "", headers, json_body(rng, body), tags=["backend"])
    if kind == 3:
        return Spec("POST", f"/api/v1/users/{user}/welcome", "", headers,
                    rng.choice([b"", json_body(rng, {"notification": {"title": "hi"}})]), tags=["backend"])
    return Spec("GET", f"/api/v1/users/{user}", "", headers, tags=["backend"])


def route_wake(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    key = rng.choice([None, "Bearer hk_" + uuid.uuid4().hex, "Bearer ", "Bearer " + "k" * 5000])
    if fx.api_key and rng.random() < 0.5:
        key = "Bearer " + fx.api_key
    headers: list[tuple[str, str | bytes]] = [("Content-Type", "application/json")]
    if key:
        headers.append(("Authorization", key))
    ident = device_id(rng, fx)
    kind = rng.randrange(4)
    if kind == 0:
        body = {"device": ident, "kind": rng.choice(["incomingHtlc", "mutualClose", rand_text(rng), "a" * 60, 7]),
                "payment_hash": rng.choice([rand_text(rng, 64, 64), "ab" * 32, "zz", "a" * 500, None]),
                "amount_msat": rng.choice([1000, -1, 2 ** 64, "x", 1.5, None]),
                "expires_at": rng.choice([None, 0, 4102444800, -5, "soon", 2 ** 63])}
        return Spec("POST", "/api/v1/wake", "", headers, json_body(rng, body), tags=["wake"])
    if kind == 1:
        query = "&".join(rng.sample([f"recipient={ident}", f"amount_msat={rng.choice(['1000', '-1', 'x', '9' * 30])}",
                                     "recipient="], rng.randint(0, 2)))
        return Spec("GET", "/api/v1/forwarding_hint", query, headers, tags=["wake"])
    # Presence: heartbeats and leaves with any secret; the held stream only with a wrong one (the
    # right one is held open on purpose, past the fuzz timeout).
    auth = device_auth(rng, fx, ident)
    if kind == 2:
        own = [device for device in fx.devices if device.id == ident]
        if own and rng.random() < 0.4:
            auth = [("Authorization", "Bearer " + own[0].secret)]
        method = rng.choice(["POST", "DELETE"])
        body = json_body(rng, {"ttl_seconds": rng.choice([30, 0, 301, -1, "x", 1.5, 2 ** 70])}) if method == "POST" else b""
        return Spec(method, f"/api/v1/devices/{ident}/presence", "", [("Content-Type", "application/json")] + auth,
                    body, tags=["wake"])
    return Spec("GET", f"/api/v1/devices/{ident}/presence/stream", "", auth, tags=["wake"])


def route_operations(rng: random.Random, fx: Fixtures, url: str) -> Spec:
    return Spec("GET", rng.choice(["/health", "/metrics", "/", "/api/v1", "/favicon.ico"]), tags=["ops"])


ROUTES = [(route_webhook, 35), (route_devices, 15), (route_reply, 8), (route_lightning, 14),
          (route_backend, 18), (route_wake, 12), (route_operations, 10)]


# ----- mutations: each bends a Spec and may mark it as one the server cannot finish


def mutate_json_syntax(rng: random.Random, spec: Spec) -> None:
    body = bytearray(spec.body or b"{}")
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(body) + 1)
        if rng.random() < 0.5 and body:
            del body[min(pos, len(body) - 1)]
        else:
            body[pos:pos] = rng.choice([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b"01", b" ,}"])
    spec.body = bytes(body)


def mutate_truncate(rng: random.Random, spec: Spec) -> None:
    spec.body = (spec.body or b'{"event":"x"}')[: rng.randrange(max(1, len(spec.body)))]


def mutate_huge(rng: random.Random, spec: Spec) -> None:
    size = rng.choice([16 * 1024 + 1, 64 * 1024 + 1, 70_000, 300_000])
    spec.body = b'{"event":"swap.update","data":{"id":"' + b"A" * size + b'","status":"x"}}'


def mutate_nested(rng: random.Random, spec: Spec) -> None:
    depth = rng.choice([511, 512, 513, 5000, 20000])
    inner = b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth
    spec.body = b'{"event":"swap.update","data":{"id":"x","status":"y","deep":' + inner + b"}}"


def mutate_nul(rng: random.Random, spec: Spec) -> None:
    body = spec.body or b'{"event":"x","data":{}}'
    pos = rng.randrange(len(body) + 1)
    spec.body = body[:pos] + rng.choice([b"\x00", b"\\u0000", b"\x00" * 50]) + body[pos:]


def mutate_surrogate(rng: random.Random, spec: Spec) -> None:
    bad = rng.choice([r"\ud800", r"\udc00", r"\ud800\ud800", r"\udbff\u0041", r"\uD83D", r"\u12", r"\uzzzz"])
    spec.body = ('{"event":"swap.update","data":{"id":"' + bad + '","status":"' + bad + '"}}').encode()


def mutate_utf8(rng: random.Random, spec: Spec) -> None:
    bad = rng.choice([b"\xff\xfe", b"\xc0\x80", b"\xed\xa0\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\x80"])
    spec.body = b'{"event":"swap.update","data":{"id":"' + bad + b'","status":"x' + bad + b'"}}'


def mutate_empty_body(rng: random.Random, spec: Spec) -> None:
    spec.body = rng.choice([b"", b" ", b"null", b"\r\n"])


def mutate_method(rng: random.Random, spec: Spec) -> None:
    spec.method = rng.choice(METHODS_ODD)
    if spec.method in ("", "POST /x", "M" * 300, "CONNECT", "PRI") or "\x00" in spec.method:
        spec.half_close = True  # may not parse as a request line, or may turn into a tunnel


def mutate_path(rng: random.Random, spec: Spec) -> None:
    spec.path = rng.choice([
        "/api/v1/../api/v1/notify", "/api/v1/%2e%2e/v1/notify", "//api//v1//notify", spec.path + "/",
        spec.path.replace("/", "%2F"), spec.path + "%00", spec.path + "%ff%fe", "/" + "a" * rng.choice([2000, 9000, 70000]),
        "/api/v1/notify/" + "x/" * 500, "*", f"http://{HOST}{spec.path}", "/../../../../etc/passwd", spec.path + "#frag",
        "/api/v1/notify;x=y", spec.path.upper(), "/\u00e9".encode().decode("latin-1")])


def mutate_query(rng: random.Random, spec: Spec) -> None:
    spec.query = rng.choice([
        "platform=ios&platform=android&token=a&token=b", "token=abc", "platform=ios",
        "platform=android&token=" + "t" * 5000, "platform=ios&token=%zz", "platform=ios&token=%00",
        "platform=ios&token=", "&&&=&", "platform&token", "platform=ios&token=a&app_data=" + "d" * 10000,
        "platform=%69os&token=%E2%82%AC", "platform=ios&token=a+b&token", spec.query + "&" + spec.query,
        "platform=ios&token=" + "%41" * 3000, "x=" + "y" * 20000])


def mutate_content_length(rng: random.Random, spec: Spec) -> None:
    spec.framing = "none"
    length = len(spec.body)
    choice = rng.randrange(6)
    # Anything but two equal lengths may leave a parser waiting for bytes that never come;
    # after EOF the server must answer or close.
    spec.half_close = spec.half_close or choice != 0
    if choice == 0:  # duplicate, same value
        spec.headers += [("Content-Length", str(length)), ("Content-Length", str(length))]
    elif choice == 1:  # duplicate, conflicting
        spec.headers += [("Content-Length", str(length)), ("Content-Length", str(length + 7))]
    elif choice == 2:
        spec.headers.append(("Content-Length", rng.choice(["-5", "abc", "1e3", " 12", "0x10", "+4", "", "1,1"])))
    elif choice == 3:  # promises more than it sends
        spec.headers.append(("Content-Length", str(length + rng.choice([1, 1000, 10**12]))))
    elif choice == 4:  # content-length and chunked together
        spec.headers += [("Content-Length", str(length)), ("Transfer-Encoding", "chunked")]
        spec.body = chunked(spec.body, rng)
    else:
        spec.headers.append(("Content-Length", "9" * 30))


def mutate_transfer_encoding(rng: random.Random, spec: Spec) -> None:
    choice = rng.randrange(6)
    if choice == 0:
        spec.framing = "chunked"
        return
    spec.framing = "none"
    spec.half_close = spec.half_close or choice != 4  # only the tiny chunks are surely well framed
    spec.headers.append(("Transfer-Encoding", rng.choice(["chunked", "chunked", "gzip, chunked", "xyz", "chunked, chunked"])))
    size = rng.choice(["-5", "ffffffffffffffffff", "zz", "", " 5", "5;" + "e" * 5000, "1" * 40])
    if choice == 1:
        spec.body = f"{size}\r\nhello\r\n0\r\n\r\n".encode()
    elif choice == 2:  # never sends the last chunk
        spec.body = chunked(spec.body, rng)[:-5]
    elif choice == 3:  # chunk longer than announced
        spec.body = b"2\r\n" + spec.body + b"\r\n0\r\n\r\n"
    elif choice == 4:  # many tiny chunks, over the body limit in total
        spec.body = b"1\r\nA\r\n" * 70_000 + b"0\r\n\r\n"
    else:
        spec.body = b"0\r\nX-Trailer: " + b"t" * 10000 + b"\r\n\r\n"


def mutate_headers(rng: random.Random, spec: Spec) -> None:
    choice = rng.randrange(9)
    if choice == 0:
        spec.headers.append(("X-Huge", "h" * rng.choice([9000, 100_000, 1_000_000])))
    elif choice == 1:
        spec.headers += [(f"X-Many-{i}", "v") for i in range(rng.choice([200, 3000]))]
    elif choice == 2:
        spec.headers.append(("X-Bad\x00Name", "v"))
    elif choice == 3:
        spec.headers.append(("X-Folded", "a\r\n folded"))
    elif choice == 4:
        spec.headers.append(("Expect", "100-continue"))
    elif choice == 5:
        spec.headers += [("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"),
                         ("HTTP2-Settings", "AAMAAABkAAQAoAAAAAIAAAAA")]
        spec.half_close = True  # an upgrade may hand the connection to something that waits
    elif choice == 6:
        spec.headers.append(("Content-Type", rng.choice(["text/plain", "application/json; charset=latin-1", "",
                                                          "x" * 3000])))
    elif choice == 7:
        spec.headers.append(("X-Bin", b"\xff\xfe\x80"))
    else:
        spec.headers.append(("Bad Header Name" + "x" * rng.randint(0, 10), "v"))


def mutate_idempotency(rng: random.Random, spec: Spec) -> None:
    values: list[str | bytes] = ["", "k" * 256, "k" * 255, "k" * 10000, b"\xff\xfe", " ", "a\tb", "\u00e9".encode()]
    spec.headers.append(("Idempotency-Key", rng.choice(values)))
    if rng.random() < 0.3:
        spec.headers.append(("Idempotency-Key", "second"))


def mutate_version(rng: random.Random, spec: Spec) -> None:
    spec.version = rng.choice(["HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1x", "http/1.1", "HTTP/1", "ICE/1.0"])


def mutate_no_host(rng: random.Random, spec: Spec) -> None:
    spec.headers.append(("Host", rng.choice(["", "a" * 5000, "evil.example", "[::1"])))


FRAMING_MUTATIONS = (mutate_content_length, mutate_transfer_encoding)
MUTATIONS = [mutate_json_syntax, mutate_truncate, mutate_huge, mutate_nested, mutate_nul, mutate_surrogate,
             mutate_utf8, mutate_empty_body, mutate_method, mutate_path, mutate_query, mutate_content_length,
             mutate_transfer_encoding, mutate_headers, mutate_idempotency, mutate_version, mutate_no_host]


# ----- raw cases: more than one request, or no request at all


def raw_pipeline(rng: random.Random, fx: Fixtures, url: str) -> tuple[str, list[bytes], int, list[bool], bool]:
    count = rng.randint(2, 6)
    requests, heads = [], []
    for _ in range(count):
        route, _ = rng.choice(ROUTES)
        spec = route(rng, fx, url)
        if rng.random() < 0.2:
            spec.method = "HEAD"
        requests.append(spec.serialize(rng))
        heads.append(spec.method == "HEAD")
    return f"pipeline x{count}", [b"".join(requests)], count, heads, False


def raw_garbage(rng: random.Random, fx: Fixtures, url: str) -> tuple[str, list[bytes], int, list[bool], bool]:
    choice = rng.randrange(8)
    if choice == 0:
        return "random bytes", [rng.randbytes(rng.randint(1, 5000))], 1, [False], True
    if choice == 1:
        return "http2 preface", [b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + rng.randbytes(30)], 1, [False], True
    if choice == 2:
        return "tls hello", [bytes.fromhex("16030100a5010000a10303") + rng.randbytes(200)], 1, [False], True
    if choice == 3:
        return "headers never end", [b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: b"], 1, [False], True
    if choice == 4:
        return "bare LF", [b"GET /health HTTP/1.1\nHost: x\n\n"], 1, [False], True
    if choice == 5:
        return "empty then EOF", [b""], 1, [False], True
    if choice == 6:
        return "CRLF flood", [b"\r\n" * rng.choice([10, 5000]) + b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"], 1, [False], True
    return "request line only", [b"GET /health HTTP/1.1\r\n"], 1, [False], True


def make_case(seed: int, index: int, fx: Fixtures, url: str) -> Case:
    """Case `index` of run `seed`: the same (seed, index, fixtures) always give the same bytes."""
    rng = random.Random(f"{seed}:{index}")
    roll = rng.random()
    if roll < 0.06:
        kind, data, expected, heads, half = raw_pipeline(rng, fx, url)
        return Case(index, kind, data, expected, heads, half)
    if roll < 0.10:
        kind, data, expected, heads, half = raw_garbage(rng, fx, url)
        return Case(index, "raw/" + kind, data, expected, heads, half)
    route = rng.choices([r for r, _ in ROUTES], weights=[w for _, w in ROUTES])[0]
    spec = route(rng, fx, url)
    names = []
    if rng.random() < 0.8:
        chosen = rng.sample(MUTATIONS, rng.choice([1, 1, 1, 2, 3]))
        # Framing goes last: it must describe the body the other mutations left.
        chosen.sort(key=lambda mutation: mutation in FRAMING_MUTATIONS)
        for mutation in chosen:
            mutation(rng, spec)
            names.append(mutation.__name__.removeprefix("mutate_"))
        if sum(mutation in FRAMING_MUTATIONS for mutation in chosen) > 1:
            spec.half_close = True  # Content-Length and Transfer-Encoding both bent: who knows
    data = spec.serialize(rng)
    kind = f"{spec.tags[0]}/{'+'.join(names) or 'plain'}"
    pieces, pause = [data], 0.0
    if rng.random() < 0.05 and len(data) > 8:  # trickled in, a few bytes at a time
        cuts = sorted(rng.sample(range(1, len(data)), min(4, len(data) - 1)))
        pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
        pause, kind = rng.uniform(0.05, 0.4), kind + "+slow"
    return Case(index, kind, pieces, 1, [spec.method == "HEAD"], spec.half_close, pause)


# ---------------------------------------------------------------------------------------------
# Fuzz: running


@dataclass
class CaseResult:
    case: Case
    result: Exchange


@dataclass
class FuzzStats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    results: list[CaseResult] = field(default_factory=list)
    answerer_statuses: collections.Counter = field(default_factory=collections.Counter)
    health_latencies: list[float] = field(default_factory=list)
    timeouts: int = 0
    hang_reason: str | None = None

    def add(self, case: Case, result: Exchange) -> None:
        with self.lock:
            self.results.append(CaseResult(case, result))


def register_fixtures(server: HeraldServer, api_key: str | None) -> Fixtures:
    devices = []
    for index, platform in enumerate(["ios", "android", "ios"]):
        answer = simple_request(server.port, "POST", "/api/v1/devices",
                                {"platform": platform,
                                 # A token of the platform's form: hex for APNs, as Herald checks.
                                 "push_token": (uuid.uuid4().hex * 2 if platform == "ios"
                                                else f"hostile-device-{index}-{uuid.uuid4().hex[:8]}")})
        if answer.status == 201:
            body = json.loads(answer.body)
            devices.append(Device(body["device_id"], body["device_secret"], body["alias"], platform))
    username = None
    if devices:
        claim = simple_request(server.port, "POST", "/api/v1/lnurlpay",
                               {"device_id": devices[0].id, "username": "hostile"}, bearer=devices[0].secret)
        username = "hostile" if claim.status in (200, 201) else None
    return Fixtures(devices, username, api_key)


REPLY_ID = re.compile(rb"reply\\*/([A-Za-z0-9_\-]{8,64})")


def phone_answers(rng: random.Random) -> tuple[bytes, list[tuple[str, str | bytes]]]:
    """What a (sometimes broken) phone posts to a reply URL."""
    info = {"tag": "payRequest", "callback": "https://x/cb", "minSendable": 1000, "maxSendable": 10**9,
            "metadata": '[["text/plain","x"]]', "commentAllowed": rng.choice([0, 10, 255])}
    body = rng.choice([
        json.dumps(info).encode(), json.dumps({**info, "minSendable": 0}).encode(),
        b'{"pr":"lnbc1x","routes":[]}', b'{"invoice":"lni1x"}', b'{"status":"ERROR","reason":"nope"}',
        b'{"settled":true,"preimage":"00","pr":"lnbc1x","status":"OK"}', b"[]", b"{", b'{"a":"\\ud800"}',
        b'{"x":"' + b"A" * 70_000 + b'"}', b"[" * 600 + b"]" * 600, b'{"n":1e400}'])
    headers: list[tuple[str, str | bytes]] = []
    if rng.random() < 0.5:
        headers.append(("Cache-Control", rng.choice(["max-age=60", "max-age=-1", "max-age=99999999999999999999",
                                                     "no-store", "max-age=\"5\"", "max-age"])))
    return body, headers


def run_answerer(server: HeraldServer, fx: Fixtures, stats: FuzzStats, stop: threading.Event, seed: int,
                 timeout: float) -> None:
    """Plays the registered phones: reads their pushes and answers every reply URL in them."""
    rng = random.Random(f"{seed}:answerer")
    after = {device.id: 0 for device in fx.devices}
    while not stop.is_set():
        for device in fx.devices:
            if stop.is_set():
                return
            feed = simple_request(server.port, "GET", f"/api/v1/devices/{device.id}/pushes?after={after[device.id]}&wait=1",
                                  bearer=device.secret, timeout=timeout)
            with stats.lock:
                stats.answerer_statuses[feed.status or feed.outcome] += 1
            if feed.status != 200:
                time.sleep(0.2)
                continue
            try:
                after[device.id] = int(json.loads(feed.body).get("next", after[device.id]))
            except (ValueError, AttributeError):
                pass
            for reply_id in dict.fromkeys(REPLY_ID.findall(feed.body)):
                body, headers = phone_answers(rng)
                for _ in range(2 if rng.random() < 0.2 else 1):  # sometimes answers twice: 409
                    answer = simple_request(server.port, "POST", f"/api/v1/reply/{reply_id.decode()}", body,
                                            headers=headers, timeout=timeout)
                    with stats.lock:
                        stats.answerer_statuses[answer.status or answer.outcome] += 1


def run_health_monitor(server: HeraldServer, stats: FuzzStats, stop: threading.Event, abort: threading.Event,
                       timeout: float) -> None:
    """Watches /health during the attack: a server that exits, or answers no probe for
    `timeout` seconds, stops the run (the remaining cases are skipped)."""
    last_answer = time.monotonic()
    while not stop.wait(0.5):
        if not server.alive():
            stats.hang_reason = f"the server exited (code {server.proc.returncode if server.proc else '?'})"
            abort.set()
            return
        started = time.monotonic()
        status = simple_request(server.port, "GET", "/health", timeout=timeout).status
        now = time.monotonic()
        with stats.lock:
            stats.health_latencies.append(now - started)
        if status is not None:
            last_answer = now
        elif now - last_answer >= timeout:
            stats.hang_reason = f"/health unanswered for {now - last_answer:.1f} s"
            abort.set()
            return


def run_cases(server: HeraldServer, cases: list[Case], stats: FuzzStats, concurrency: int, timeout: float,
              abort: threading.Event) -> int:
    """Runs the cases from `concurrency` threads; returns how many were skipped after an abort
    (the server exited, stopped answering /health, or let `max_timeouts` requests time out)."""
    max_timeouts = max(10, concurrency)
    queue = collections.deque(cases)
    queue_lock = threading.Lock()
    skipped = 0

    def worker() -> None:
        nonlocal skipped
        while True:
            with queue_lock:
                if not queue:
                    return
                if abort.is_set():
                    skipped += len(queue)
                    queue.clear()
                    return
                case = queue.popleft()
            result = exchange(server.port, case.pieces, expected=case.expected, heads=case.heads,
                              half_close=case.half_close, pause=case.pause, timeout=timeout)
            stats.add(case, result)
            if result.outcome == "connect failed" and not server.alive():
                abort.set()
            if result.outcome == "timeout":
                with stats.lock:
                    stats.timeouts += 1
                    if stats.timeouts >= max_timeouts and not abort.is_set():
                        stats.hang_reason = stats.hang_reason or f"{stats.timeouts} requests timed out"
                        abort.set()

    threads = [threading.Thread(target=worker, daemon=True, name=f"fuzz-{i}") for i in range(concurrency)]
    for thread in threads:
        thread.start()
    # Every case is bounded by its socket deadline (plus trickle pauses), so this bound is never
    # reached unless something is badly wrong in this script.
    deadline = time.monotonic() + (len(cases) / max(1, concurrency) + 2) * (timeout + 3)
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = sum(thread.is_alive() for thread in threads)
    if stuck:
        print(f"warning: {stuck} fuzz threads still running at the join bound", flush=True)
    return skipped


def print_status_table(stats: FuzzStats, total: int) -> None:
    counts: collections.Counter = collections.Counter({"closed without answer": 0, "timeout": 0})
    for item in stats.results:
        for response in item.result.responses:
            counts[str(response.status)] += 1
        missing = item.case.expected - len(item.result.responses)
        if item.result.outcome == "closed" and missing > 0:
            counts["closed without answer"] += missing
        elif item.result.outcome in ("timeout", "connect failed", "garbled"):
            counts[item.result.outcome] += max(1, missing)
    print(f"\nstatuses seen ({len(stats.results)} of {total} cases run, "
          f"{sum(c.case.expected for c in stats.results)} requests):")
    numeric = sorted((k for k in counts if k.isdigit()), key=int)
    for key in numeric + sorted(k for k in counts if not k.isdigit()):
        print(f"  {key:>22}  {counts[key]}")
    if stats.answerer_statuses:
        print("phone helper (push feed + reply posts): " +
              ", ".join(f"{k}: {v}" for k, v in sorted(stats.answerer_statuses.items(), key=str)))
    if stats.health_latencies:
        print(f"/health during the run: {len(stats.health_latencies)} probes, slowest {max(stats.health_latencies):.2f} s")
    closed = [r for r in stats.results if r.result.outcome == "closed"]
    if closed:
        by_part = collections.Counter(part for r in closed for part in set(re.split(r"[/+]", r.case.kind)))
        print("closed without answer, by route/mutation: " + ", ".join(f"{k} {v}" for k, v in by_part.most_common(12)))
    slowest = sorted(stats.results, key=lambda r: r.result.elapsed, reverse=True)[:5]
    print("slowest cases: " + ", ".join(f"#{r.case.index} {r.case.kind} {r.result.elapsed:.2f}s ({r.result.outcome})"
                                        for r in slowest))
    print(flush=True)


def describe_cases(title: str, items: list[CaseResult], limit: int = 8) -> str:
    """How many cases, by route and mutation, and the first few with the bytes they sent."""
    by_part = collections.Counter(part for item in items for part in set(re.split(r"[/+]", item.case.kind)))
    lines = [f"{len(items)} {title}; by route/mutation: " + ", ".join(f"{k} {v}" for k, v in by_part.most_common(10))]
    for item in items[:limit]:
        statuses = ",".join(str(r.status) for r in item.result.responses) or "-"
        lines.append(f"    case #{item.case.index} {item.case.kind}: {item.result.outcome} statuses={statuses} "
                     f"after {item.result.elapsed:.2f}s; sent {item.case.preview()}")
    return "\n".join(lines)


def check_final_webhook(server: HeraldServer, report: Report, seed: int) -> None:
    token = f"hostile-final-{seed}"
    path, body = valid_webhook(token, f"final-{uuid.uuid4().hex}")
    answer = simple_request(server.port, "POST", path, body, timeout=10)
    acknowledged = answer.status == 200
    report.check("final webhook acknowledged", acknowledged, f"status {answer.status or answer.outcome}")
    if not acknowledged:
        report.check("final webhook delivered", False, "not acknowledged")
        return
    job_id = json.loads(answer.body).get("id")
    deadline, state, pushed = time.monotonic() + 10, None, 0
    while time.monotonic() < deadline:
        try:
            with open_readonly(server.database) as db:
                pushed = db.execute("SELECT COUNT(*) FROM local_push WHERE token = ?", (token,)).fetchone()[0]
                row = db.execute("SELECT state FROM job WHERE id = ?", (job_id,)).fetchone()
                state = row[0] if row else None
        except sqlite3.Error as error:
            state = f"db error {error}"
        if pushed and state == "delivered":
            break
        time.sleep(0.1)
    report.check("final webhook delivered within 10 s", pushed > 0 and state == "delivered",
                 f"job {job_id} state {state}, {pushed} local push(es)")


def fuzz(binary: str, seed: int | None, cases: int, concurrency: int, timeout: float, keep: bool,
         only: list[int] | None = None) -> Report:
    seed = seed if seed is not None else random.randrange(1 << 32)
    print(f"== fuzz: seed {seed}, {len(only) if only else cases} cases, concurrency {concurrency}, "
          f"timeout {timeout:g} s (repeat with --seed {seed})", flush=True)
    report = Report()
    workdir, copy = prepare_workdir(binary, keep)
    # Held webhooks (replies nobody gives) must end well inside the per-request timeout.
    server = HeraldServer(copy, workdir, reply_timeout=max(1, min(3, int(timeout / 3))))
    api_key = server.create_api_key()
    try:
        if not report.check("server starts", server.start(), f"{server.url}, database {server.database}"):
            server.print_log_tail()
            return report
        fx = register_fixtures(server, api_key)
        print(f"fixtures: {len(fx.devices)} devices, username {fx.username}, api key {'yes' if api_key else 'no'}")
        indices = only if only else range(cases)
        all_cases = [make_case(seed, i, fx, server.url) for i in indices]

        stats, stop, abort = FuzzStats(), threading.Event(), threading.Event()
        helpers = [threading.Thread(target=run_health_monitor, args=(server, stats, stop, abort, timeout), daemon=True),
                   threading.Thread(target=run_answerer, args=(server, fx, stats, stop, seed, timeout), daemon=True)]
        for helper in helpers:
            helper.start()
        started = time.monotonic()
        skipped = run_cases(server, all_cases, stats, concurrency, timeout, abort)
        stop.set()
        for helper in helpers:
            helper.join(timeout + 5)
        print(f"ran {len(stats.results)} cases in {time.monotonic() - started:.1f} s")
        print_status_table(stats, len(all_cases))

        server_errors = [r for r in stats.results
                         if any(s.status >= 500 and s.status not in ALLOWED_5XX for s in r.result.responses)]
        answerer_errors = [k for k in stats.answerer_statuses if isinstance(k, int) and k >= 500 and k not in ALLOWED_5XX]
        report.check("no 5xx other than 502/503/504", not server_errors and not answerer_errors,
                     describe_cases("cases with one", server_errors) if server_errors
                     else (f"phone helper saw {answerer_errors}" if answerer_errors else ""))
        timeouts = [r for r in stats.results if r.result.outcome == "timeout"]
        report.check(f"every request answered or closed within {timeout:g} s", not timeouts,
                     describe_cases("timed out", timeouts) if timeouts else "")
        garbled = [r for r in stats.results if r.result.outcome == "garbled"]
        report.check("every answer is HTTP", not garbled, describe_cases("garbled", garbled) if garbled else "")
        if stats.hang_reason is None and not server.alive():
            stats.hang_reason = f"the server exited (code {server.proc.returncode if server.proc else '?'})"
        report.check("no hang or exit during the attack", stats.hang_reason is None and skipped == 0,
                     f"{stats.hang_reason}; {skipped} cases skipped" if stats.hang_reason or skipped else "")
        report.check("server alive at the end", server.alive(),
                     "" if server.alive() else f"exit code {server.proc.returncode if server.proc else '?'}")
        started = time.monotonic()
        health = simple_request(server.port, "GET", "/health", timeout=1.0)
        report.check("/health 200 within 1 s", health.status == 200,
                     f"status {health.status or health.outcome} after {time.monotonic() - started:.2f} s")
        check_final_webhook(server, report, seed)
        check_sigterm(server, report)
    finally:
        server.stop_quietly()
        finish_run(report, server, workdir, keep, f"fuzz seed {seed}")
    return report


def check_sigterm(server: HeraldServer, report: Report) -> None:
    running = server.alive()
    exited, took, code = server.terminate(10)
    report.check("SIGTERM stops the server within 10 s", running and exited,
                 f"exit code {code} after {took:.1f} s" if running else f"it was not running (exit code {code})")


def finish_run(report: Report, server: HeraldServer, workdir: Path, keep: bool, label: str) -> None:
    """Prints the server's last words on failure; removes the work folder after a pass. The
    binary copy goes either way (it is large); the log and database stay with a failure."""
    server.binary.unlink(missing_ok=True)
    if report.failed:
        server.print_log_tail()
        crash_report = server.crash_report()
        if crash_report:
            print(crash_report)
        print(f"{label}: failed; work folder kept at {workdir}", flush=True)
    elif not keep:
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Crash: kill -9 under load, then count what was acknowledged against what was pushed


@dataclass
class CrashLedger:
    lock: threading.Lock = field(default_factory=threading.Lock)
    acknowledged: set[str] = field(default_factory=set)
    statuses: collections.Counter = field(default_factory=collections.Counter)
    sent: int = 0


class Pacer:
    """Hands out send times `1/rate` apart across threads, never building a backlog."""

    def __init__(self, rate: float):
        self.interval = 1.0 / rate
        self.next = time.monotonic()
        self.lock = threading.Lock()

    def wait(self, stop: threading.Event) -> bool:
        with self.lock:
            slot = max(self.next, time.monotonic())
            self.next = slot + self.interval
        delay = slot - time.monotonic()
        return not (delay > 0 and stop.wait(delay)) and not stop.is_set()


def run_sender(server: HeraldServer, run_id: str, thread_no: int, pacer: Pacer, ledger: CrashLedger,
               stop: threading.Event) -> None:
    """Sends unique webhooks over a keep-alive connection, reconnecting whenever it breaks."""
    token = f"crash-{run_id}-{thread_no}"
    sock: socket.socket | None = None
    buf = b""
    number = 0
    while pacer.wait(stop):
        number += 1
        swap_id = f"hx-{run_id}-{thread_no}-{number:07d}"
        path, body = valid_webhook(token, swap_id)
        request = build_request("POST", path, [("Content-Type", "application/json")], json.dumps(body).encode())
        with ledger.lock:
            ledger.sent += 1
        try:
            if sock is None:
                sock = socket.create_connection((HOST, server.port), timeout=1.0)
                buf = b""
            sock.settimeout(10.0)
            sock.sendall(request)
            response = None
            while response is None:
                response, used = parse_response(buf, False, False)
                if response is None:
                    data = sock.recv(65536)
                    if not data:
                        raise ConnectionError("closed")
                    buf += data
            buf = buf[used:]
        except (OSError, Garbled):
            if sock is not None:
                sock.close()
            sock = None
            with ledger.lock:
                ledger.statuses["no answer"] += 1
            stop.wait(0.01)
            continue
        with ledger.lock:
            ledger.statuses[response.status] += 1
            if response.status == 200 and b'"id"' in response.body:
                ledger.acknowledged.add(swap_id)
        if response.headers.get("connection", "").lower() == "close":
            sock.close()
            sock = None
    if sock is not None:
        sock.close()


def wait_for_drain(database: Path, within: float) -> dict[str, int]:
    deadline = time.monotonic() + within
    states: dict[str, int] = {}
    while time.monotonic() < deadline:
        try:
            states = job_states(database)
        except sqlite3.Error:
            states = {"unreadable": 1}
        if states.get("pending", 0) == 0 and "unreadable" not in states:
            return states
        time.sleep(0.2)
    return states


def deliveries(database: Path, run_id: str) -> collections.Counter:
    pattern = re.compile(rf"hx-{re.escape(run_id)}-\d+-\d{{7}}".encode())
    counts: collections.Counter = collections.Counter()
    with open_readonly(database) as db:
        for (payload,) in db.execute("SELECT payload FROM local_push"):
            data = payload if isinstance(payload, bytes) else str(payload).encode()
            for found in set(pattern.findall(data)):
                counts[found.decode()] += 1
    return counts


def crash(binary: str, cycles: int, rate: float, threads: int, max_duplicate_share: float, keep: bool,
          seed: int | None = None) -> Report:
    seed = seed if seed is not None else random.randrange(1 << 32)
    rng = random.Random(seed)
    run_id = f"{seed:x}"
    print(f"== crash: seed {seed}, {cycles} kill -9 cycles, {rate:g} webhooks/s from {threads} threads", flush=True)
    report = Report()
    workdir, copy = prepare_workdir(binary, keep)
    server = HeraldServer(copy, workdir)
    ledger, stop = CrashLedger(), threading.Event()
    senders: list[threading.Thread] = []
    try:
        if not report.check("server starts", server.start(), server.url):
            return report
        pacer = Pacer(rate)
        senders = [threading.Thread(target=run_sender, args=(server, run_id, i, pacer, ledger, stop), daemon=True)
                   for i in range(threads)]
        for sender in senders:
            sender.start()
        restarts_ok, died_alone, started = 0, 0, time.monotonic()
        for cycle in range(cycles):
            time.sleep(rng.uniform(0.3, 2.5))
            with ledger.lock:
                acked = len(ledger.acknowledged)
            if not server.alive():
                died_alone += 1
                print(f"  the server exited by itself (code {server.proc.returncode if server.proc else '?'})")
            server.kill9()
            time.sleep(rng.uniform(0.0, 0.3))
            up = server.start()
            restarts_ok += up
            print(f"  kill #{cycle + 1}: {acked} acknowledged so far; restart {'ok' if up else 'FAILED'}", flush=True)
            if not up:
                break
        time.sleep(0.5)
        stop.set()
        for sender in senders:
            sender.join(15)
        elapsed = time.monotonic() - started
        report.check("every restart after kill -9 becomes healthy", restarts_ok == cycles,
                     f"{restarts_ok} of {cycles}")
        report.check("the server never exits by itself under load", died_alone == 0 and server.alive(),
                     f"{died_alone} unexpected exits" if died_alone else "")
        print(f"sent {ledger.sent} in {elapsed:.1f} s ({ledger.sent / max(elapsed, 0.001):.0f}/s); answers: " +
              ", ".join(f"{k}: {v}" for k, v in sorted(ledger.statuses.items(), key=str)), flush=True)
        report.check("webhooks were acknowledged", len(ledger.acknowledged) > 0, f"{len(ledger.acknowledged)} acknowledged")
        if not server.alive() and not report.check("final restart", server.start()):
            return report
        states = wait_for_drain(server.database, 60)
        report.check("outbox drains (no pending jobs within 60 s)", states.get("pending", 0) == 0,
                     f"job states {states}")
        check_sigterm(server, report)

        delivered = deliveries(server.database, run_id)
        lost = sorted(ledger.acknowledged - delivered.keys())
        duplicated = [i for i in ledger.acknowledged if delivered[i] > 1]
        share = len(duplicated) / max(1, len(ledger.acknowledged))
        unacknowledged = len(delivered.keys() - ledger.acknowledged)
        print(f"acknowledged {len(ledger.acknowledged)}, pushed {len(delivered)} distinct ids "
              f"({sum(delivered.values())} pushes; {unacknowledged} pushed without an acknowledgement), "
              f"duplicates {len(duplicated)} = {share:.2%} of acknowledged", flush=True)
        report.check("0 acknowledged webhooks lost", not lost, f"{len(lost)} lost" + (f", e.g. {lost[:5]}" if lost else ""))
        report.check(f"duplicate share <= {max_duplicate_share:.2%}", share <= max_duplicate_share, f"{share:.2%}")
    finally:
        stop.set()
        server.stop_quietly()
        finish_run(report, server, workdir, keep, f"crash seed {seed}")
    return report


# ---------------------------------------------------------------------------------------------
# Doors: the attacks of issue 39 ("hostile callers, round 2"), each against a live server, with
# the legitimate caller the attack aimed at succeeding during it.


def emulate_phone(port: int, device: Device, stop: threading.Event, answered: list[int]) -> None:
    """Alice's phone: reads its pushes off the local provider's feed and answers each pay-request
    push on its reply URL, as the plugin would."""
    after = 0
    while not stop.is_set():
        feed = simple_request(port, "GET", f"/api/v1/devices/{device.id}/pushes?after={after}&wait=1",
                              bearer=device.secret, timeout=5)
        if feed.status != 200:
            time.sleep(0.1)
            continue
        answer = json.loads(feed.body)
        after = answer.get("next", after)
        for push in answer.get("pushes", []):
            payload = json.loads(push.get("payload", {}).get("notification_payload", "{}"))
            reply = payload.get("reply_url")
            if not reply or "callback_url" not in payload:
                continue
            info = {"tag": "payRequest", "callback": payload["callback_url"], "minSendable": 1000,
                    "maxSendable": 100000000, "metadata": json.dumps([["text/plain", "alice"]])}
            path = "/" + reply.split("/", 3)[3]
            if simple_request(port, "POST", path, info, timeout=5).status == 200:
                answered.append(1)


def register(port: int, platform: str, token: str) -> Device | None:
    made = simple_request(port, "POST", "/api/v1/devices", {"platform": platform, "push_token": token})
    if made.status != 201:
        return None
    body = json.loads(made.body)
    return Device(body["device_id"], body["device_secret"], body["alias"], platform)


def door_held_replies(server: HeraldServer, report: Report) -> None:
    """A flood of fresh raw tokens holding LNURL requests, and a payer of alice@ during it."""
    port = server.port
    alice = register(port, "ios", uuid.uuid4().hex * 2)
    if not report.check("held replies: alice registers", alice is not None):
        return
    claimed = simple_request(port, "POST", "/api/v1/lnurlpay", {"device_id": alice.id, "username": "alice"},
                             bearer=alice.secret)
    report.check("held replies: alice@ claimed", claimed.status == 201, f"{claimed.status} {claimed.body[:120]!r}")
    stop, answered = threading.Event(), []
    phone = threading.Thread(target=emulate_phone, args=(port, alice, stop, answered), daemon=True)
    phone.start()
    flood_statuses: collections.Counter = collections.Counter()
    lock = threading.Lock()

    def flood(index: int) -> None:
        token = f"{index:064x}"
        answer = simple_request(port, "POST", f"/api/v1/notify?platform=ios&token={token}",
                                {"template": "lnurlpay_info", "data": {"callback_url": "https://x"}}, timeout=15)
        with lock:
            flood_statuses[answer.status] += 1

    attackers = [threading.Thread(target=flood, args=(0xF100D000 + i,), daemon=True) for i in range(200)]
    for attacker in attackers:
        attacker.start()
    time.sleep(1.0)
    payer = simple_request(port, "GET", "/.well-known/lnurlp/alice", timeout=15)
    for attacker in attackers:
        attacker.join(30)
    stop.set()
    phone.join(10)
    print(f"  raw-token flood of 200 held requests (max_held_replies 64): answers {dict(flood_statuses)}; "
          f"a payer of alice@ during it: {payer.status}", flush=True)
    report.check("held replies: a payer of alice@ gets the pay request during a raw-token flood",
                 payer.status == 200, f"{payer.status} {payer.body[:160]!r}")
    report.check("held replies: one client holds at most its share (16) of raw-token requests",
                 flood_statuses.get(504, 0) <= 16, f"{dict(flood_statuses)}")


def door_streams(server: HeraldServer, report: Report) -> None:
    """As many presence streams as the server takes connections, for one free device."""
    port = server.port
    device = register(port, "android", "fcm-" + uuid.uuid4().hex)
    if not report.check("streams: a device registers", device is not None):
        return
    sockets: list[socket.socket] = []
    for _ in range(64):
        try:
            sock = socket.create_connection((HOST, port), timeout=5)
            sock.sendall(f"GET /api/v1/devices/{device.id}/presence/stream HTTP/1.1\r\nHost: x\r\n"
                         f"Authorization: Bearer {device.secret}\r\n\r\n".encode())
            sockets.append(sock)
        except OSError:
            break
    # The streams the server ended free their connections within moments, though the attacker
    # keeps its sockets open.
    time.sleep(3.0)
    health = simple_request(port, "GET", "/health", timeout=5)
    # How many of the streams are still held: the server closed the rest.
    held = 0
    for sock in sockets:
        sock.settimeout(0.2)
        try:
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            held += 1
        except OSError:
            pass
        finally:
            sock.close()
    print(f"  64 presence streams for one device (max_connections 64): {held} still held, /health {health.status}",
          flush=True)
    report.check("streams: /health answers 200 while one device opens a stream per connection", health.status == 200,
                 f"{health.status}")
    report.check("streams: a device holds at most 2", held <= 2, f"{held} held")


def door_idempotency_and_case(server: HeraldServer, report: Report) -> None:
    """A planted Idempotency-Key, and an APNs token spelt in upper case."""
    port = server.port
    token = uuid.uuid4().hex * 2
    key = [("Idempotency-Key", "swap-7-" + uuid.uuid4().hex)]
    planted = simple_request(port, "POST", f"/api/v1/notify?platform=ios&token={token}",
                             {"event": "swap.update", "data": {"id": "swap-7", "status": "swap.expired"}}, headers=key)
    real = simple_request(port, "POST", f"/api/v1/notify?platform=ios&token={token}",
                          {"event": "swap.update", "data": {"id": "swap-7", "status": "transaction.claimed"}},
                          headers=key)
    print(f"  planted key: {planted.status}; the real call with another body: {real.status} {real.body[:80]!r}",
          flush=True)
    report.check("idempotency: the real call is refused 422, not handed the planted job",
                 real.status == 422 and b"idempotency_key_reused" in real.body, f"{real.status} {real.body[:120]!r}")
    body = {"event": "swap.update", "data": {"id": "swap-8", "status": "transaction.mempool"}}
    key = [("Idempotency-Key", "case-" + uuid.uuid4().hex)]
    lower = simple_request(port, "POST", f"/api/v1/notify?platform=ios&token={token}", body, headers=key)
    upper = simple_request(port, "POST", f"/api/v1/notify?platform=ios&token={token.upper()}", body, headers=key)
    same = lower.status == 200 and upper.status == 200 and json.loads(lower.body) == json.loads(upper.body)
    report.check("token case: an APNs token in upper case is the same target (one job for one key)", same,
                 f"{lower.body[:80]!r} / {upper.body[:80]!r}")


def door_registration(copy: Path, workdir: Path, report: Report) -> None:
    """With `registration: challenge` and raw tokens off: an alias made for someone else's token."""
    folder = workdir / "challenge"
    folder.mkdir(exist_ok=True)
    server = HeraldServer(copy, folder, extra=["--registration", "challenge", "--accept-raw-tokens", "false"])
    try:
        if not report.check("registration: a challenge-mode server starts", server.start(), server.url):
            return
        squatter = register(server.port, "android", "fcm-someone-elses-" + uuid.uuid4().hex)
        if not report.check("registration: anyone may still register", squatter is not None):
            return
        statuses = collections.Counter(
            simple_request(server.port, "POST", f"/api/v1/notify?token={squatter.alias}",
                           {"event": "swap.update", "data": {"id": f"s{i}", "status": "x"}}).status for i in range(20))
        print(f"  20 webhooks through an alias made for someone else's token (registration: challenge): {dict(statuses)}",
              flush=True)
        report.check("registration: an unconfirmed alias pushes nothing (403 device_unconfirmed)",
                     statuses == collections.Counter({403: 20}), f"{dict(statuses)}")
    finally:
        server.stop_quietly()


def doors(binary: str, keep: bool) -> Report:
    print("== doors: the attacks of issue 39 against a live server", flush=True)
    report = Report()
    workdir, copy = prepare_workdir(binary, keep)
    server = HeraldServer(copy, workdir, reply_timeout=3,
                          extra=["--max-held-replies", "64", "--max-connections", "64"])
    try:
        if not report.check("server starts", server.start(), server.url):
            return report
        door_held_replies(server, report)
        door_streams(server, report)
        door_idempotency_and_case(server, report)
        report.check("server still alive", server.alive())
        door_registration(copy, workdir, report)
    finally:
        server.stop_quietly()
        finish_run(report, server, workdir, keep, "doors")
    return report


# ---------------------------------------------------------------------------------------------
# Command line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    def common(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--binary", required=True, help="the herald executable (copied before it is run)")
        sub.add_argument("--seed", type=int, help="random seed (printed; repeat a run with it)")
        sub.add_argument("--keep", action="store_true", help="keep the work folder after a passing run")

    fuzz_cmd = commands.add_parser("fuzz", help="hostile requests to every route")
    common(fuzz_cmd)
    fuzz_cmd.add_argument("--cases", type=int, default=3000)
    fuzz_cmd.add_argument("--concurrency", type=int, default=32)
    fuzz_cmd.add_argument("--timeout", type=float, default=15.0, help="seconds a request may take to be answered or closed")
    fuzz_cmd.add_argument("--only", type=lambda s: [int(x) for x in s.split(",")], help="replay these case numbers only")

    crash_cmd = commands.add_parser("crash", help="kill -9 under webhook load; nothing acknowledged may be lost")
    common(crash_cmd)
    crash_cmd.add_argument("--cycles", type=int, default=10)
    crash_cmd.add_argument("--rate", type=float, default=500.0, help="webhooks per second")
    crash_cmd.add_argument("--threads", type=int, default=8, help="sending threads")
    crash_cmd.add_argument("--max-duplicate-share", type=float, default=0.01)
    crash_cmd.add_argument("--busy", type=int, default=0,
                           help="busy loops competing for the cores while it runs (a shared host)")

    doors_cmd = commands.add_parser("doors", help="issue 39's attacks, each with the legitimate caller succeeding")
    common(doors_cmd)

    all_cmd = commands.add_parser("all", help="bounded fuzz (2000 cases) and crash (5 cycles at 300/s), for CI")
    common(all_cmd)
    all_cmd.add_argument("--max-duplicate-share", type=float, default=0.01)

    args = parser.parse_args()
    if args.command == "fuzz":
        report = fuzz(args.binary, args.seed, args.cases, args.concurrency, args.timeout, args.keep, args.only)
    elif args.command == "crash":
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        try:
            report = crash(args.binary, args.cycles, args.rate, args.threads, args.max_duplicate_share, args.keep, args.seed)
        finally:
            for process in busy:
                process.kill()
    elif args.command == "doors":
        report = doors(args.binary, args.keep)
    else:
        report = fuzz(args.binary, args.seed, 2000, 32, 15.0, args.keep)
        print()
        report.merge(crash(args.binary, 5, 300.0, 6, args.max_duplicate_share, args.keep, args.seed))
        print()
        report.merge(doors(args.binary, args.keep))
        print()
        if report.failures:
            print("failed checks: " + "; ".join(report.failures))
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
