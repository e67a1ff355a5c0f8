#!/usr/bin/env bash
# Peak RSS and peak private dirty memory of `herald-device handle` on one push that replies
# to a local HTTP server (the closing-note figures of issue 5).
# Usage: scripts/measure-device-memory.sh [path/to/herald-device]   (default: release build)
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:-}"
if [[ -z "$binary" ]]; then
  swift build -c release --product herald-device >/dev/null
  binary="$(swift build -c release --show-bin-path)/herald-device"
fi
work="$(mktemp -d)"
trap 'kill "${server_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# A reply URL that answers 200, as the NDS relay does.
python3 - "$work/port" <<'PY' &
import http.server, sys
class Reply(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Reply)
open(sys.argv[1], "w").write(str(server.server_address[1]))
server.serve_forever()
PY
server_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port="$(cat "$work/port")"

payload="{\\\"amount\\\":21000,\\\"reply_url\\\":\\\"http://127.0.0.1:$port/reply/1\\\",\\\"verify_url\\\":\\\"http://127.0.0.1:$port/verify/{payment_hash}\\\",\\\"identifier\\\":\\\"alice@herald.example\\\"}"
printf '{"aps":{"alert":{"title":"Herald","body":"Wallet activity"},"mutable-content":1},"notification_type":"lnurlpay_invoice","notification_payload":"%s","app_data":""}' "$payload" >"$work/push.json"

peak_dirty=0
HERALD_DEVICE_MEMORY=1 "$binary" handle "$work/push.json" --wallet "$work/wallet" >"$work/out.json" 2>"$work/err.txt" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  dirty="$(awk '/^Private_Dirty:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true)"
  [[ -n "$dirty" && "$dirty" -gt "$peak_dirty" ]] && peak_dirty="$dirty"
  sleep 0.001
done
wait "$pid"
cat "$work/out.json"
grep '^memory:' "$work/err.txt"
echo "sampled peak private_dirty=${peak_dirty} kB"
