#!/usr/bin/env bash
# The browser device in a real browser: headless Chromium (Debian's chromium and chromium-driver,
# driven by Selenium) opens RichPush's /device page, signs in, subscribes at a local push service
# (richpush webpush-sim, TLS), registers, and receives a rich push sent through a worker with
# --adapter webpush: decrypted with WebCrypto, payload fetched, notification shown with OK and
# More, More clicked, the image checked against the one sent; then the push service ends the
# subscription, the page subscribes again and re-registers, and the next push, at the new endpoint,
# is dismissed with OK. A PNG screenshot of each step goes to .tmp/browser/screenshots/. Stops
# exactly what it started; exits 0 only if every step passed.
# Uses $RICHPUSH_BIN when set (scripts/test.sh passes the debug binary), else builds release.
# Files: ~/.cache/richpush/browser-venv (Selenium, installed once per machine; RICHPUSH_BROWSER_VENV
# moves it), .tmp/browser/run-* (logs, the private redis-server, Chromium's profile).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools curl python3 openssl chromium chromium-driver fonts-dejavu-core
ensure_swift
private_tmp browser
richpush_binary

# Selenium in a virtualenv of its own, outside the clone, reused while the pin is the same.
browser_venv

work=$(mktemp -d "$TMPDIR/run-XXXX")
shots="$PWD/.tmp/browser/screenshots"
rm -rf "$shots"
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work"
}
trap cleanup EXIT
started=$SECONDS

port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
password=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
echo "$password" | "$bin" users add alice --cost 4 >/dev/null
api_port=$(free_port)
"$bin" api --port "$api_port" --log-level warning 2>"$work/api.log" & pids+=($!)

# A VAPID key pair for this run: the worker signs with it, the page restricts its subscription to it.
openssl ecparam -name prime256v1 -genkey -noout -out "$work/vapid-ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/vapid-ec.pem" -out "$work/vapid.pem"
server_key=$(openssl ec -in "$work/vapid-ec.pem" -pubout -outform DER 2>/dev/null | tail -c 65 | base64 -w0 | tr '+/' '-_' | tr -d '=')
webpush_port=$(free_port)
"$bin" webpush-sim --port "$webpush_port" --cert-dir "$work/webpush" --log-requests >"$work/webpush-sim.log" 2>"$work/webpush-sim.err" & pids+=($!)
for _ in $(seq 1 300); do grep -q listening "$work/webpush-sim.err" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/webpush-sim.err" || { echo "error: webpush-sim did not start:" >&2; cat "$work/webpush-sim.err" >&2; exit 1; }
# Chromium forgives the certificate errors of this key only (the run's own CA signed it).
spki=$(openssl x509 -in "$work/webpush/cert.pem" -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64)

"$bin" worker --adapter webpush --consumer browser-worker --log-level warning --webpush-vapid-key-file "$work/vapid.pem" \
    --webpush-subject mailto:browser-test@example.com --webpush-ca-file "$work/webpush/ca.pem" 2>"$work/worker.log" & pids+=($!)
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 300); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { echo "error: the API did not start; see $work/api.log" >&2; exit 1; }
echo "==> API on $base, push service on https://127.0.0.1:$webpush_port, a worker with --adapter webpush"

page="$base/device?push=https%3A%2F%2F127.0.0.1%3A$webpush_port&key=$server_key"
echo "==> Chromium (headless) opens $page"
RICHPUSH_PASSWORD="$password" "$venv/bin/python" scripts/browser/device_flow.py --page "$page" --api "$base" --user alice \
    --image Sources/RichPushAPI/Resources/default-image.png --shots "$shots" --profile "$work/chromium" --spki "$spki" \
    --push "https://127.0.0.1:$webpush_port" --push-ca "$work/webpush/ca.pem" & flow=$!
pids+=($flow)
status=0
wait "$flow" || status=$?
if [ "$status" -ne 0 ]; then
    echo "BROWSER TEST FAILED; logs in $work, screenshots in $shots" >&2
    exit 1
fi
accepted=$(grep '"event":"push"' "$work/webpush-sim.log" | grep -c '"status":201' || true)
[ "$accepted" -eq 2 ] || { echo "error: expected webpush-sim to accept 2 pushes, it accepted $accepted" >&2; exit 1; }
echo "==> the browser device went all the way in $((SECONDS - started)) s: subscribed, registered, received, decrypted, fetched, displayed, opened with More; subscribed again when the push service ended its subscription, and dismissed the next push with OK"
