#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
driven by selenium.

    python3 scripts/dashboard_browser.py --binary .build/debug/herald [--screenshot docs/dashboard.png] [--keep]

Starts a real `herald serve` (temporary SQLite database, a 3 s job TTL) whose APNs provider
points at a small APNs look-alike in this script (HTTP/2 over cleartext, answering 200, or 503
while "down", counting requests per device token), creates an admin key with `herald keys
create`, and then, in the browser:

1. opens /admin, is shown the log-in form, logs in with the key;
2. sends webhooks and waits for the page (which refreshes itself every 5 s) to show them:
   the webhook count, the sends, the share of `delivered` for the `apns` provider;
3. takes APNs "down", sends one more webhook, and waits for its dead letter (`ttl_expired`) to
   appear in the page's list with the look-alike's 503 as the last answer;
4. brings APNs back, presses that letter's Replay button, sees the letter leave the list and
   the notice, and checks the look-alike received the replayed push exactly once;
5. saves a screenshot of the page.

Exit status 0 only when every check passed. Needs selenium (pinned in `.ci/run`) and h2.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import HOST, HeraldServer, Report, free_port, simple_request  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
JOB_TTL = 3
SWAP = {"event": "swap.update", "data": {"id": "swap-1", "status": "transaction.claim.pending"}}


class APNsLookalike:
    """Just enough of APNs over h2c: 200 with an apns-id, or 503 ServiceUnavailable while down."""

    def __init__(self) -> None:
        self.port = free_port()
        self.down = False
        self.lock = threading.Lock()
        self.answers: dict[str, list[int]] = {}  # device token -> statuses answered, in order
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, self.port))
        self.sock.listen(16)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn: socket.socket) -> None:
        h2conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
        h2conn.initiate_connection()
        conn.sendall(h2conn.data_to_send())
        paths: dict[int, str] = {}
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        paths[event.stream_id] = dict(event.headers).get(b":path", b"").decode()
                    elif isinstance(event, h2.events.DataReceived):
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        self.answer(h2conn, event.stream_id, paths.pop(event.stream_id, ""))
                conn.sendall(h2conn.data_to_send())
        except (OSError, h2.exceptions.ProtocolError):
            return
        finally:
            conn.close()

    def answer(self, h2conn: h2.connection.H2Connection, stream: int, path: str) -> None:
        token = path.rsplit("/", 1)[-1]
        with self.lock:
            status = 503 if self.down else 200
            self.answers.setdefault(token, []).append(status)
        if status == 200:
            h2conn.send_headers(stream, [(":status", "200"), ("apns-id", f"00000000-0000-0000-0000-{stream:012d}")],
                                end_stream=True)
        else:
            body = json.dumps({"reason": "ServiceUnavailable"}).encode()
            h2conn.send_headers(stream, [(":status", "503"), ("content-type", "application/json"),
                                         ("content-length", str(len(body)))])
            h2conn.send_data(stream, body, end_stream=True)

    def statuses(self, token: str) -> list[int]:
        with self.lock:
            return list(self.answers.get(token, []))

    def close(self) -> None:
        self.sock.close()


class APNsServer(HeraldServer):
    """`herald serve` with APNs credentials pointing at the look-alike (the harness clears
    HERALD_* from the environment, so they are given through env(1))."""

    def __init__(self, binary: Path, workdir: Path, apns: APNsLookalike):
        super().__init__(binary, workdir)
        key = workdir / "apns.p8"
        pem = subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout"],
                             capture_output=True, check=True).stdout
        key.write_bytes(subprocess.run(["openssl", "pkcs8", "-topk8", "-nocrypt"], input=pem,
                                       capture_output=True, check=True).stdout)
        self.environment = [f"HERALD_APNS_KEY_FILE={key}", "HERALD_APNS_KEY_ID=ABC123DEFG",
                            "HERALD_APNS_TEAM_ID=DEF123GHIJ", "HERALD_APNS_TOPIC=org.herald.wallet",
                            f"HERALD_APNS_URL=http://{HOST}:{apns.port}"]

    def command(self) -> list[str]:
        return ["env", *self.environment, *super().command(), "--job-ttl", str(JOB_TTL)]


def webhook(server: HeraldServer, token: str) -> int | None:
    return simple_request(server.port, "POST", f"/api/v1/notify?platform=ios&token={token}", SWAP).status


def wait_for(condition, within: float, step: float = 0.25):
    """Polls `condition` until it returns something truthy (returned), or None after `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            value = condition()
        except WebDriverException:
            value = None
        if value:
            return value
        time.sleep(step)
    return None


def browser(width: int, height: int) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={width},{height}", "--hide-scrollbars", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    driver_path = shutil.which("chromedriver")
    service = Service(executable_path=driver_path) if driver_path else Service()
    return webdriver.Chrome(options=options, service=service)


def text(driver: webdriver.Chrome, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def detail(driver: webdriver.Chrome, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).find_element(By.XPATH, "..").text


def letter_ids(driver: webdriver.Chrome) -> list[str]:
    return [row.get_attribute("data-id") for row in driver.find_elements(By.CSS_SELECTOR, "tr.dead-letter")]


def run(driver: webdriver.Chrome, server: HeraldServer, apns: APNsLookalike, key: str, report: Report,
        screenshot: Path) -> None:
    base = server.url
    driver.get(base + "/admin")
    report.check("the dashboard asks for a key first", bool(driver.find_elements(By.NAME, "key")))
    driver.find_element(By.NAME, "key").send_keys("not-a-key")
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    # The click submits a form: wait for the answer page rather than read the one being left.
    report.check("a wrong key is refused on the page", bool(wait_for(lambda: "Unknown or revoked" in driver.page_source, 10)))
    driver.find_element(By.NAME, "key").send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "form.login button").click()
    report.check("logging in shows the dashboard", bool(wait_for(lambda: driver.find_elements(By.ID, "webhooks-rate"), 10)))
    cookie = driver.get_cookie("herald_admin") or {}
    report.check("the session cookie is HttpOnly and SameSite=Strict",
                 cookie.get("httpOnly") is True and cookie.get("sameSite") == "Strict")
    report.check("no webhooks yet", detail(driver, "webhooks-rate").find("0 in 6 min") >= 0)

    # Live figures: webhooks in, pushes out, all delivered; the page refreshes itself.
    tokens = [f"{index:02x}" * 32 for index in range(12)]
    statuses = [webhook(server, token) for token in tokens]
    report.check("12 webhooks accepted", statuses == [200] * 12, str(statuses))
    moved = wait_for(lambda: "12 in 6 min" in detail(driver, "webhooks-rate")
                     and "12 in 6 min" in detail(driver, "pushes-rate"), 15)
    report.check("the page shows the 12 webhooks and 12 pushes without a reload", bool(moved),
                 detail(driver, "webhooks-rate") + " / " + detail(driver, "pushes-rate"))
    outcomes = driver.find_element(By.ID, "outcomes").text
    report.check("outcome shares by provider: apns delivered 100%", "apns" in outcomes and "delivered 100% (12)" in outcomes,
                 outcomes)
    report.check("the APNs provider shows as connected with a token", "connected" in driver.find_element(By.TAG_NAME, "main").text)

    # A dead letter: APNs answers 503 until the job's TTL has passed.
    apns.down = True
    stalled = "ab" * 32
    report.check("the webhook for the stalled push is accepted", webhook(server, stalled) == 200)
    row = wait_for(lambda: [r for r in driver.find_elements(By.CSS_SELECTOR, "tr.dead-letter") if "ttl_expired" in r.text],
                   JOB_TTL + 20)
    report.check("its dead letter appears on the page with reason ttl_expired", bool(row))
    if not row:
        return
    letter = row[0].get_attribute("data-id")
    report.check("the letter shows APNs's last answer (503)", "503" in row[0].text, row[0].text)
    report.check("the dead-letter count shows it", text(driver, "dead-letter-count") == "1")
    refused = apns.statuses(stalled)
    report.check("APNs was tried and refused it", len(refused) >= 1 and set(refused) == {503}, str(refused))

    # APNs recovers; the Replay button sends it again, once.
    apns.down = False
    driver.find_element(By.CSS_SELECTOR, f'button.replay[data-id="{letter}"]').click()
    report.check("after the replay the letter has left the list",
                 bool(wait_for(lambda: letter not in letter_ids(driver), 10)))
    report.check("the page says it was replayed", "replayed as a new job" in driver.page_source)
    delivered = wait_for(lambda: apns.statuses(stalled)[len(refused):] == [200] or None, 10)
    time.sleep(1.5)
    report.check("the look-alike received the replayed push exactly once",
                 bool(delivered) and apns.statuses(stalled)[len(refused):] == [200], str(apns.statuses(stalled)))
    report.check("no dead letters left", bool(wait_for(lambda: text(driver, "dead-letter-count") == "0", 12)))

    # The screenshot: more traffic for the chart, and two fresh dead letters (APNs down again)
    # so the list shows its Replay buttons.
    for token in tokens[:6]:
        webhook(server, token)
    report.check("the figures keep moving", bool(wait_for(lambda: "19 in 6 min" in detail(driver, "webhooks-rate"), 12)))
    apns.down = True
    for token in ("cd" * 32, "ef" * 32):
        webhook(server, token)
    report.check("two new dead letters appear",
                 bool(wait_for(lambda: len(letter_ids(driver)) == 2, JOB_TTL + 20)))
    apns.down = False
    shoot(driver, screenshot, width=1280, mobile=False)
    report.check("screenshot saved", screenshot.is_file(), str(screenshot))
    report.check("at 1280 px every table stays inside its card", tables_fit(driver), tables_fit.last)
    shoot(driver, screenshot.with_name("dashboard-phone.png"), width=390, mobile=True)
    report.check("at 390 px every table stays inside its card", tables_fit(driver), tables_fit.last)
    wide = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
    report.check("readable on a phone: no sideways scrolling at 390 px", not wide)
    buttons = driver.execute_script(
        "return [...document.querySelectorAll('button.replay')].every(b => {"
        " const r = b.getBoundingClientRect(); return r.width > 0 && r.right <= window.innerWidth; })")
    report.check("on a phone the Replay buttons are on screen", bool(buttons))


def tables_fit(driver: webdriver.Chrome) -> bool:
    """Whether each card's table ends within the card (the cards that scroll sideways on
    purpose, `.scroll`, aside); the ones that spill are kept in `tables_fit.last`."""
    spilled = driver.execute_script(
        "return [...document.querySelectorAll('.card table')].filter(t => !t.closest('.scroll')).filter(t => {"
        " const card = t.closest('.card').getBoundingClientRect(); return t.getBoundingClientRect().right > card.right + 1;"
        " }).map(t => t.closest('.card').id || t.closest('.card').className)")
    tables_fit.last = f"spilling: {spilled}" if spilled else ""
    return not spilled


tables_fit.last = ""


def shoot(driver: webdriver.Chrome, path: Path, *, width: int, mobile: bool) -> None:
    """A screenshot of the whole page at `width` CSS pixels (the viewport grown to the page's height)."""
    metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": mobile}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    time.sleep(0.3)
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {**metrics, "height": min(height, 4000)})
    time.sleep(0.3)
    driver.save_screenshot(str(path))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the herald executable (e.g. .build/debug/herald)")
    parser.add_argument("--screenshot", default=str(ROOT / "docs" / "dashboard.png"))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()

    binary = Path(args.binary).resolve()
    if not binary.is_file():
        sys.exit(f"not an executable file: {args.binary}")
    screenshot = Path(args.screenshot).resolve()
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="herald-dashboard-"))
    print(f"work folder: {workdir}", flush=True)
    report = Report()
    apns = APNsLookalike()
    server = APNsServer(binary, workdir, apns)
    driver = None
    try:
        key = server.create_api_key()
        if not report.check("server starts", bool(key) and server.start()):
            server.print_log_tail()
            return report.finish()
        driver = browser(1280, 1000)
        run(driver, server, apns, key, report, screenshot)
        report.check("server still alive", server.alive())
        if report.failed:
            server.print_log_tail()
    finally:
        if driver is not None:
            driver.quit()
        server.stop_quietly()
        apns.close()
        if not args.keep and report.failed == 0:
            shutil.rmtree(workdir, ignore_errors=True)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
