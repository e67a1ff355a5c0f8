#!/usr/bin/env python3
"""Runs the examples of README.md and docs/*.md against a real `herald serve`, so they cannot rot.

A `sh` block right after a `<!-- example -->` line is runnable: one command (curl), then a
comment with the answer the file shows, `# [status] {json}`. This script starts `herald serve`
on a fresh SQLite file (the local development provider), creates an API key with every scope
for `$HERALD_KEY`, and runs the examples with bash, in one server and in a fixed order: README.md
first (its walk-through registers the device the later examples use), then the files of
`DOCS_ORDER` in that order, then any other docs/*.md by name; within a file, top to bottom. It
fills in what a reader fills in by hand:

- the server's address for `http://127.0.0.1:8080` and `https://your.domain`;
- `<APNs device token>` (64 hex digits), `<fcm token>`, `<64 hex>`;
- `<device_id>`, `$DEVICE_ID`, `$DEVICE_SECRET` and `<alias>` from the first answer that carries a
  `device_secret`: the README's registration example, which runs before every example of docs/.

Each answer must have the status shown (200 when none is) and exactly the top-level fields shown:
a field the server adds or drops fails the run, so the docs keep up with the server. A check is
named by its file and the line of its `<!-- example -->` mark (`docs/wakes.md line 10`).

A `sh` block after `<!-- command -->` holds commands of `herald` and `herald-device` (the
binaries beside `--binary`, first on `PATH`) and `curl`, with `# prints <text>` lines: the block
runs as one bash script (`-e`) in a fresh folder, with the same server address and `$HERALD_KEY`;
it must exit 0, and its output (standard output and error) must contain every text shown.

    python3 scripts/readme_examples.py --binary .build/debug/herald
    python3 scripts/readme_examples.py --binary .build/debug/herald --self-test   # must catch a changed answer
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile import HeraldServer, Report  # noqa: E402  (the same server harness)

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- example -->"
COMMAND_MARK = "<!-- command -->"
# docs/*.md in the order their examples run, after README.md; a file not listed runs after these.
DOCS_ORDER = ["configuration.md", "http-api.md", "lightning-address.md", "wakes.md", "phone.md",
              "operations.md", "benchmarks.md"]


def sources(root: Path) -> list[tuple[str, str]]:
    """(name relative to root, text) of README.md and every docs/*.md, in the order they run."""
    docs = sorted((root / "docs").glob("*.md"), key=lambda path: (
        DOCS_ORDER.index(path.name) if path.name in DOCS_ORDER else len(DOCS_ORDER), path.name))
    return [(path.relative_to(root).as_posix(), path.read_text()) for path in [root / "README.md", *docs]]


def examples(name: str, source: str) -> list[tuple[str, str, int, dict]]:
    """(file and line, command, expected status, expected answer) for every marked block."""
    lines = source.split("\n")
    found = []
    for index, line in enumerate(lines):
        if line.strip() != MARK:
            continue
        assert lines[index + 1].startswith("```sh"), f"{name} line {index + 2}: a marked example must be a sh block"
        body = []
        for text in lines[index + 2:]:
            if text.startswith("```"):
                break
            body.append(text)
        command = "\n".join(t for t in body if not t.startswith("#"))
        answer = next(t for t in body if t.startswith("# "))[2:].strip()
        match = re.match(r"(\d{3}) (.*)", answer)
        status, answer_text = (int(match.group(1)), match.group(2)) if match else (200, answer)
        found.append((f"{name} line {index + 1}", command, status, json.loads(answer_text)))
    return found


def commands(name: str, source: str) -> list[tuple[str, str, list[str]]]:
    """(file and line, the block's commands, texts its output must hold) for every command block."""
    lines = source.split("\n")
    found = []
    for index, line in enumerate(lines):
        if line.strip() != COMMAND_MARK:
            continue
        assert lines[index + 1].startswith("```sh"), f"{name} line {index + 2}: a command block must be a sh block"
        script, texts = [], []
        for text in lines[index + 2:]:
            if text.startswith("```"):
                break
            if text.startswith("# prints "):
                texts.append(text[len("# prints "):])
            elif text.strip() and not text.startswith("#"):
                script.append(text)
        found.append((f"{name} line {index + 1}", "\n".join(script), texts))
    return found


def run_commands(binary: Path, base: str, key: str, files: list[tuple[str, str]], report: Report) -> None:
    env = dict(os.environ, HERALD_KEY=key, PATH=f"{binary.resolve().parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env = {k: v for k, v in env.items() if not (k.startswith("HERALD_") and k != "HERALD_KEY")}
    for name, script, texts in (found for file in files for found in commands(*file)):
        # One block, one fresh folder and one shell: a later line uses what an earlier one wrote.
        folder = tempfile.mkdtemp(prefix="herald-command-")
        done = subprocess.run(["bash", "-e", "-c", script.replace("http://127.0.0.1:8080", base)], capture_output=True,
                              text=True, env=env, cwd=folder, timeout=120)
        output = done.stdout + done.stderr
        report.check(f"{name}: the commands exit 0", done.returncode == 0, output[-300:])
        for text in texts:
            report.check(f"{name}: prints {text}", text in output, output[-300:])


def run(binary: Path, files: list[tuple[str, str]], report: Report) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="herald-readme-"))
    # Breez payment webhooks on, with a secret the examples sign with as `$BREEZ_SECRET`.
    breez_secret = secrets.token_hex(32)
    (workdir / "breez.secret").write_text(breez_secret + "\n")
    (workdir / "herald.yaml").write_text(f"breez:\n  webhook_secret_file: {workdir / 'breez.secret'}\n")
    server = HeraldServer(binary, workdir, extra=["--config", str(workdir / "herald.yaml")])
    key = server.create_api_key()
    if not report.check("server starts", bool(key) and server.start()):
        server.print_log_tail()
        return
    base = f"http://127.0.0.1:{server.port}"
    fill = {"<APNs device token>": secrets.token_hex(32), "<fcm token>": "fcm-" + secrets.token_hex(20),
            "<64 hex>": secrets.token_hex(32)}
    env = dict(os.environ, HERALD_KEY=key, BREEZ_SECRET=breez_secret)
    try:
        for name, command, status, shown in (found for file in files for found in examples(*file)):
            for placeholder, value in fill.items():
                command = command.replace(placeholder, value)
            command = command.replace("http://127.0.0.1:8080", base).replace("https://your.domain", base)
            # The status after the body, on a line of its own.
            command = command.replace("curl ", "curl -w '\\n%{http_code}' ", 1)
            done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=60)
            body, _, code = done.stdout.rpartition("\n")
            try:
                answer = json.loads(body) if body.strip() else {}
            except json.JSONDecodeError:
                answer = {"<not JSON>": body[:200]}
            report.check(f"{name}: status {status}", code == str(status), f"got {code}: {body[:300]}")
            if isinstance(shown, dict) and isinstance(answer, dict):
                report.check(f"{name}: the fields shown", set(answer) == set(shown),
                             f"shown {sorted(shown)}, answered {sorted(answer)}")
            # Later examples use what a reader takes from the first registration's answer.
            if "device_secret" in answer and "<device_id>" not in fill:
                env["DEVICE_ID"], env["DEVICE_SECRET"] = answer["device_id"], answer["device_secret"]
                fill["<device_id>"] = answer["device_id"]
                fill["<alias>"] = answer["alias"]
        run_commands(binary, base, key, files, report)
        report.check("server still alive", server.alive())
    finally:
        server.stop_quietly()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", type=Path, default=ROOT / ".build" / "debug" / "herald")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the folder holding README.md and docs/ (default: this repository)")
    parser.add_argument("--self-test", action="store_true",
                        help="run with a README whose registration answer lacks a field: the run must fail")
    args = parser.parse_args()
    files = sources(args.root)
    if args.self_test:
        name, readme = files[0]
        broken = readme.replace('# 201 {"alias":"…","app":"default",', '# 201 {"alias":"…",', 1)
        assert broken != readme, "the registration example is not where the self-test expects it"
        report = Report()
        run(args.binary, [(name, broken), *files[1:]], report)
        caught = report.failed == 1
        print(f"{'PASS' if caught else 'FAIL'}  a README answer missing a field the server sends fails the run")
        return 0 if caught else 1
    report = Report()
    run(args.binary, files, report)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
