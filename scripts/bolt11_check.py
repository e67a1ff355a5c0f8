#!/usr/bin/env python3
"""A payer's real LNURL library pays alice@ through Herald, and an independent BOLT11 decoder
checks the invoice the development wallet answers with. Python 3.11 with PyPI `lnurl` and
`bolt11` (pinned in .ci/run):

    python3 -m pip install lnurl==2.0.2 bolt11==2.2.0
    python3 scripts/bolt11_check.py --herald .build/debug/herald --device .build/debug/herald-device

It does what docs/lightning-address.md tells a new user to do, on one machine:
starts `herald serve` (local development provider, a temporary SQLite database, a free port),
starts `herald-device listen` as the phone (it registers and keeps device_id and
device_secret in its folder), claims `alice` with that id and secret, and then plays the payer:

- `lnurl` resolves alice's pay request and calls the callback with an amount; it refuses an
  answer that is not a BOLT11 invoice for that amount (it decodes `pr` itself).
- `bolt11` decodes the invoice: regtest, the amount asked, the payment hash in the LUD-21
  verify URL, the description hash equal to SHA-256 of the metadata (LUD-06), and a valid
  signature recovering to the node id `herald-device wallet node-id` prints.
- LUD-21: verify says unsettled, `herald-device wallet settle` settles it, verify then gives a
  preimage whose SHA-256 is the payment hash.

`lnurl`'s own Lightning-address parser maps an address to https on a public domain only, so the
script builds the same LUD-16 URL (`http://127.0.0.1:PORT/.well-known/lnurlp/alice`) and hands
`lnurl` its LNURL bech32, which it accepts over http for 127.0.0.1.

Then the other foreign clients of Herald's newer routes:

- LUD-12: `lnurl` sends a comment as httpx writes a query (`thanks+a+lot+%2B1`); the wallet must
  get `thanks a lot +1`.
- Breez's Spark payment webhook, signed as Breez's own docs do it in Python (`hmac`), to a device
  that proved its Lightning key with an LN signed message made by `coincurve`: one push, a retry
  answered with the same job, a wrong signature 401.
- breez/notify's `nwc_event` with a NIP-47 request that PyPI `nostr-sdk` wrote (NIP-44 v2,
  BIP-340): taken, passed to the phone byte for byte; one that is not NIP-01 refused 422.

Every check prints PASS or FAIL; the last line is `N passed, M failed`; the exit status is 0
only if all passed. Needs no network beyond the loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
from importlib import metadata as package_metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import bolt11
import lnurl

HOST = "127.0.0.1"


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def http(method: str, url: str, body: object = None, bearer: str | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if bearer:
        request.add_header("Authorization", f"Bearer {bearer}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def wait_for(predicate, within: float, what: str):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError(what)


class Processes:
    """`herald serve` and `herald-device listen`, each logging to a file in the work folder."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.running: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, command: list[str], extra: dict[str, str] | None = None) -> subprocess.Popen:
        log = open(self.workdir / f"{name}.log", "wb")
        # Push credentials in the environment would replace the local development provider.
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERALD_")} | (extra or {})
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        self.running.append((name, process))
        return process

    def log(self, name: str) -> str:
        try:
            return (self.workdir / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        for _, process in reversed(self.running):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def run(args: argparse.Namespace, workdir: Path, report: Report) -> None:
    processes = Processes(workdir)
    try:
        pay(args, workdir, processes, report)
    except Exception as error:  # noqa: BLE001 - any surprise is a failed check, with the logs
        report.check("the flow ran to its end", False, f"{type(error).__name__}: {error}")
        for name, _ in processes.running:
            print(f"---- {name}.log (last 30 lines) ----\n" + "\n".join(processes.log(name).splitlines()[-30:]))
    finally:
        processes.stop()
    processes = Processes(workdir)
    try:
        spark(args, workdir, processes, report)
    except Exception as error:  # noqa: BLE001
        report.check("the Spark flow ran to its end", False, f"{type(error).__name__}: {error}")
        for name, _ in processes.running:
            print(f"---- {name}.log (last 30 lines) ----\n" + "\n".join(processes.log(name).splitlines()[-30:]))
    finally:
        processes.stop()


def pay(args: argparse.Namespace, workdir: Path, processes: Processes, report: Report) -> None:
    port = free_port()
    base = f"http://{HOST}:{port}"
    phone = workdir / "phone"
    device = [str(args.device), "--wallet", str(phone)]

    # The server, as `herald serve` runs on a fresh machine: the local development provider.
    processes.start("serve", [str(args.herald), "serve", "--host", HOST, "--port", str(port),
                              "--database", str(workdir / "herald.sqlite")])
    wait_for(lambda: _healthy(base), 60, "herald serve did not answer /health")

    # The phone: registers, keeps its registration in its folder, then handles pushes.
    processes.start("listen", [str(args.device), "listen", "--server", base, "--wallet", str(phone)])
    registration_file = phone / "registration.json"
    registration = wait_for(lambda: _read_json(registration_file), 60, "herald-device listen did not register")
    mode = registration_file.stat().st_mode & 0o777
    report.check("registration.json, which holds the device secret, is owner-only (0600)", mode == 0o600, oct(mode))
    status, claimed = http("POST", f"{base}/api/v1/lnurlpay",
                           {"device_id": registration["device_id"], "username": "alice"},
                           bearer=registration["device_secret"])
    report.check("alice@ claimed with the phone's device id and secret", status == 201,
                 f"{status} {claimed.get('lightning_address')}")
    address = f"alice@{HOST}:{port}"

    node_id = json.loads(subprocess.run(device + ["wallet", "node-id"], capture_output=True, check=True,
                                        timeout=30).stdout)["node_id"]
    print(f"wallet node id: {node_id}", flush=True)

    # The payer: lnurl resolves the pay request (LUD-06/16).
    pay_request = asyncio.run(lnurl.handle(lnurl.encode(f"{base}/.well-known/lnurlp/alice")))
    report.check("lnurl parses alice's pay request", isinstance(pay_request, lnurl.LnurlPayResponse),
                 type(pay_request).__name__)
    metadata = str(pay_request.metadata)
    report.check("the metadata names the address (LUD-16)", ["text/identifier", address] in json.loads(metadata),
                 metadata)

    for amount in (21_000, 1_234_567, 250_000_000):
        # lnurl calls the callback and refuses anything but a BOLT11 invoice for this amount.
        action = asyncio.run(lnurl.execute_pay_request(pay_request, amount))
        pr = str(action.pr)
        report.check(f"{amount} msat: lnurl accepts the callback's answer", bool(pr), pr[:40] + "…")
        check_invoice(pr, amount, metadata, node_id, report)

        verify = str(action.verify) if getattr(action, "verify", None) else ""
        invoice = bolt11.decode(pr)
        report.check(f"{amount} msat: the LUD-21 verify URL names the invoice's payment hash",
                     verify.endswith("/" + invoice.payment_hash), verify)

    # LUD-12: lnurl sends a comment as httpx encodes a query (a space as `+`, a plus as `%2B`); it
    # reaches the wallet as the payer wrote it.
    comment = "thanks a lot +1"
    asyncio.run(lnurl.execute_pay_request(pay_request, 5_000, comment=comment))
    invoices = json.loads(subprocess.run(device + ["wallet", "invoices"], capture_output=True, check=True, timeout=30).stdout)
    notes = [entry.get("payerNote") for entry in invoices]
    report.check("a comment lnurl form-encodes reaches the wallet as written", comment in notes, f"{notes}")

    # LUD-21 with the last invoice: unsettled, then settled by the wallet, with a true preimage.
    status, before = http("GET", verify)
    report.check("verify before payment: settled false, no preimage",
                 status == 200 and before.get("settled") is False and before.get("preimage") is None
                 and before.get("pr") == pr, json.dumps(before))
    settled = subprocess.run(device + ["wallet", "settle", invoice.payment_hash], capture_output=True, timeout=30)
    report.check("herald-device wallet settle knows the invoice", settled.returncode == 0,
                 settled.stdout.decode().strip())
    # The unsettled answer may be served from Herald's cache for 3 s; then the phone is asked again.
    after = wait_for(lambda: _settled(verify), 30, "verify never reported the payment settled")
    preimage = after.get("preimage") or ""
    report.check("verify after payment: settled, with the preimage of the payment hash",
                 hashlib.sha256(bytes.fromhex(preimage)).hexdigest() == invoice.payment_hash,
                 f"sha256({preimage[:16]}…) = {invoice.payment_hash[:16]}…")


ZBASE32 = "ybndrfg8ejkmcpqxot1uwisza345h769"


def zbase32(data: bytes) -> str:
    bits = "".join(f"{byte:08b}" for byte in data)
    bits += "0" * (-len(bits) % 5)
    return "".join(ZBASE32[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))


def ln_sign(key: "coincurve.PrivateKey", message: str) -> str:
    """An LN signed message as lnd's signmessage writes it, made here with coincurve (libsecp256k1's
    Python binding), not by Herald: zbase32 of (31 + recovery id, r, s) over
    SHA-256d("Lightning Signed Message:" + message)."""
    digest = hashlib.sha256(hashlib.sha256(b"Lightning Signed Message:" + message.encode()).digest()).digest()
    signature = key.sign_recoverable(digest, hasher=None)
    return zbase32(bytes([31 + signature[64]]) + signature[:64])


def spark(args: argparse.Namespace, workdir: Path, processes: Processes, report: Report) -> None:
    """Breez's Spark payment webhook as Breez sends it, signed as their docs' Python example signs it,
    to a device that proved its Lightning key with a signature coincurve made."""
    import coincurve
    import hmac

    port = free_port()
    base = f"http://{HOST}:{port}"
    secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    (workdir / "breez.secret").write_text(secret + "\n")
    processes.start("spark-serve", [str(args.herald), "serve", "--host", HOST, "--port", str(port),
                                    "--database", str(workdir / "spark.sqlite")],
                    {"HERALD_BREEZ_WEBHOOK_SECRET_FILE": str(workdir / "breez.secret")})
    wait_for(lambda: _healthy(base), 60, "herald serve (Spark) did not answer /health")

    key = coincurve.PrivateKey()
    identity = "ln:" + key.public_key.format(compressed=True).hex()
    token, ts = "fcm-spark-" + os.urandom(8).hex(), int(time.time())
    # The deployment the proof is for, as Herald says it.
    audience = http("GET", f"{base}/wake/v1/info")[1]["audience"]
    preimage = f"herald-identity-v1\naudience:{audience}\nplatform:android\npush_token:{token}\nidentities:{identity}\nts:{ts}"
    status, device = http("POST", f"{base}/api/v1/devices", {
        "platform": "android", "push_token": token, "identities": [identity], "ts": ts,
        "proofs": [{"identity": identity, "sig": ln_sign(key, preimage)}]})
    report.check("a device proves its Lightning key with coincurve's LN signed message", status == 201
                 and device.get("identities") == [identity], f"{status} {device}")

    payment_hash = os.urandom(32).hex()
    body = json.dumps({"template": "spark_payment_received", "data": {
        "payment_hash": payment_hash, "user_pubkey": identity[3:], "invoice": "lnbc500u1p", "preimage": os.urandom(32).hex(),
        "amount_sat": 50000, "lightning_address": "alice@example.com", "sender_comment": "Thanks!",
        "timestamp": int(time.time() * 1000)}}).encode()
    signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    for attempt in ("first delivery", "Breez's retry"):
        request = urllib.request.Request(f"{base}/api/v1/breez/payments", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "X-Breez-Signature": signature})
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
            report.check(f"Spark webhook, {attempt}: 200 with one job", response.status == 200 and answer.get("devices") == 1,
                         json.dumps(answer))
    forged = urllib.request.Request(f"{base}/api/v1/breez/payments", data=body, method="POST",
                                    headers={"Content-Type": "application/json", "X-Breez-Signature": "00" * 32})
    try:
        urllib.request.urlopen(forged, timeout=30)
        report.check("a wrong signature is refused", False)
    except urllib.error.HTTPError as error:
        report.check("a wrong signature is refused with 401", error.code == 401, str(error.code))

    def pushed():
        status, feed = http("GET", f"{base}/api/v1/devices/{device['device_id']}/pushes?after=0&wait=1",
                            bearer=device["device_secret"])
        return feed.get("pushes") if status == 200 and feed.get("pushes") else None

    # A Nostr Wallet Connect request as a Nostr library writes it (PyPI nostr-sdk: NIP-44 v2 of a
    # 400-character invoice, BIP-340 signed), passed on by breez/notify's nwc_event template.
    from nostr_sdk import EventBuilder, Keys, Kind, Nip44Version, Tag, nip44_encrypt
    app, wallet = Keys.generate(), Keys.generate()
    request_json = json.dumps({"method": "pay_invoice", "params": {"invoice": "lnbc" + "q" * 396}})
    event = EventBuilder(Kind(23194), nip44_encrypt(app.secret_key(), wallet.public_key(), request_json, Nip44Version.V2)) \
        .tags([Tag.public_key(wallet.public_key())]).finalize(app).as_json()
    nwc_token = "fcm-nwc-" + os.urandom(8).hex()
    status, accepted = http("POST", f"{base}/api/v1/notify?platform=android&token={nwc_token}",
                            {"template": "nwc_event", "data": {"event": event}})
    report.check("nostr-sdk's NIP-47 request is taken as an nwc_event", status == 200, f"{status} {accepted}")
    status, refused = http("POST", f"{base}/api/v1/notify?platform=android&token={nwc_token}",
                           {"template": "nwc_event", "data": {"event": event.replace('"kind":23194', '"kind":"x"')}})
    report.check("an event that is not NIP-01 is refused", status == 422 and refused.get("error") == "invalid_data",
                 f"{status} {refused}")
    status, nwc = http("POST", f"{base}/api/v1/devices", {"platform": "android", "push_token": nwc_token})

    def nwc_pushed():
        status, feed = http("GET", f"{base}/api/v1/devices/{nwc['device_id']}/pushes?after=0&wait=1",
                            bearer=nwc["device_secret"])
        return feed.get("pushes") if status == 200 and feed.get("pushes") else None

    forwarded = json.loads(wait_for(nwc_pushed, 30, "no nwc_event push")[0]["payload"]["notification_payload"])
    report.check("the phone gets nostr-sdk's event byte for byte", forwarded.get("event") == event,
                 f"{len(event)} B event")

    pushes = wait_for(pushed, 30, "no push reached the device")
    payload = json.loads(pushes[0]["payload"]["notification_payload"])
    report.check("one payment_received push, with the amount and never the preimage",
                 len(pushes) == 1 and pushes[0]["payload"]["notification_type"] == "payment_received"
                 and payload == {"payment_hash": payment_hash, "amount_sat": 50000,
                                 "lightning_address": "alice@example.com", "sender_comment": "Thanks!"},
                 json.dumps(pushes))


def check_invoice(pr: str, amount: int, metadata: str, node_id: str, report: Report) -> None:
    """What the independent decoder reads from the invoice."""
    invoice = bolt11.decode(pr)
    label = f"{amount} msat"
    report.check(f"{label}: regtest invoice (lnbcrt)", pr.startswith("lnbcrt") and invoice.currency == "bcrt",
                 pr[:16])
    report.check(f"{label}: the amount asked", invoice.amount_msat == amount, f"{invoice.amount_msat} msat")
    expected = hashlib.sha256(metadata.encode()).hexdigest()
    report.check(f"{label}: description hash = SHA-256 of the metadata (LUD-06)",
                 invoice.description_hash == expected and invoice.description is None,
                 invoice.description_hash or "none")
    report.check(f"{label}: a 32-byte payment hash and payment secret",
                 len(bytes.fromhex(invoice.payment_hash)) == 32 and len(bytes.fromhex(invoice.payment_secret or "")) == 32)
    report.check(f"{label}: the signature recovers to the wallet's node id", invoice.payee == node_id,
                 invoice.payee or "none")
    try:
        verified = invoice.signature.verify(node_id)
    except ValueError:
        verified = False
    report.check(f"{label}: the signature verifies against that key", verified)
    report.check(f"{label}: fresh timestamp, expiry 3600 s, final CLTV delta 18",
                 abs(invoice.date - time.time()) < 120 and invoice.expiry == 3600
                 and invoice.min_final_cltv_expiry == 18,
                 f"date {invoice.date} expiry {invoice.expiry} cltv {invoice.min_final_cltv_expiry}")
    features = invoice.features.readable if invoice.features else {}
    report.check(f"{label}: features require var_onion_optin and payment_secret",
                 features.get("var_onion_optin") == "required" and features.get("payment_secret") == "required",
                 json.dumps(features))
    # The decoder is not a rubber stamp: one changed character breaks the checksum.
    position = len(pr) // 2
    tampered = pr[:position] + ("q" if pr[position] != "q" else "p") + pr[position + 1:]
    try:
        bolt11.decode(tampered)
        refused = False
    except Exception:  # noqa: BLE001 - any refusal will do
        refused = True
    report.check(f"{label}: the decoder refuses it with one character changed", refused)


def _healthy(base: str) -> bool:
    try:
        return http("GET", f"{base}/health")[0] == 200
    except OSError:
        return False


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _settled(verify: str) -> dict | None:
    status, body = http("GET", verify)
    return body if status == 200 and body.get("settled") is True else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--herald", default=".build/debug/herald", type=Path)
    parser.add_argument("--device", default=".build/debug/herald-device", type=Path)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    for binary in (args.herald, args.device):
        if not (binary.is_file() and os.access(binary, os.X_OK)):
            sys.exit(f"not an executable file: {binary}")
    print(f"lnurl {package_metadata.version('lnurl')}, bolt11 {package_metadata.version('bolt11')}", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="herald-bolt11-"))
    report = Report()
    run(args, workdir, report)
    if report.failed == 0 and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"work folder kept: {workdir}")
    print(f"{report.passed} passed, {report.failed} failed", flush=True)
    return 0 if report.failed == 0 and report.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
