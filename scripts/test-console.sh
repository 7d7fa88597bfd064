#!/usr/bin/env bash
# The operator's console in a real browser: headless Chromium (Debian's chromium and
# chromium-driver, driven by Selenium) signs in to /console as an operator, sees the overview
# update live while jobs arrive (and pause while the tab is hidden), filters the dead letters, replays all that match (count, then
# confirm that number) while more die in between, and checks that exactly the counted ones
# went back and purges the rest by selection, finds a notification by id, registers a device,
# has a worker (which the flow starts and stops) push a notification to it, fetches and receipts
# it, finds it by search with every step's time in its timeline, and finds the device with its
# recent pushes; cancels all the scheduled sends that match (count, confirm) while one more is
# scheduled in between, pauses and resumes the default app, does a test send to a registered
# device with a worker running and sees its outcome, lists a webhook without its secret; has a
# second worker process three notifications and finds it in the overview's workers' chart beside
# the rate columns, and renders a template in the preview, compared with
# POST /api/templates/render; then a viewer sees
# no action buttons and is refused (403) when it forges one, and
# an admin reads the audit log. Dead letters are real: jobs of a type no handler takes, which a
# worker dead-letters. A PNG screenshot of every page (desktop and phone widths) goes to
# .tmp/console/screenshots/. Stops exactly what it started; exits 0 only if every step passed.
# Uses $RICHPUSH_BIN when set (e.g. .build/debug/richpush), else builds release.
# Files: ~/.cache/richpush/browser-venv (Selenium, shared with scripts/test-browser.sh),
# .tmp/console/run-* (logs, the private redis-server, Chromium's profile).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools curl python3 chromium chromium-driver fonts-dejavu-core
ensure_swift
private_tmp console
richpush_binary

browser_venv

work=$(mktemp -d "$TMPDIR/run-XXXX")
shots="$PWD/.tmp/console/screenshots"
rm -rf "$shots"
pids=()
worker=""
cleanup() {
    for pid in "${pids[@]}" $worker; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}" $worker; do wait "$pid" 2>/dev/null || true; done
    kill_private_redis "$work"
}
trap cleanup EXIT
started=$SECONDS

port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
declare -A passwords
for user in ops view root; do
    passwords[$user]=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    echo "${passwords[$user]}" | "$bin" users add "$user" --cost 4 >/dev/null
done
"$bin" users set-role ops operator >/dev/null
"$bin" users set-role view viewer >/dev/null
"$bin" users set-role root admin >/dev/null

# 30 real dead letters: jobs of a type no handler takes, dead-lettered by a worker at once.
"$bin" enqueue --type console-test-bogus --payload 'no handler takes me' --count 30 >/dev/null
"$bin" worker --consumer console-worker --log-level warning 2>"$work/worker.log" & worker=$!
for _ in $(seq 1 300); do
    [ "$(redis-cli -p "$port" XLEN 'richpush:{q0}:dead')" = "30" ] && break
    sleep 0.1
done
[ "$(redis-cli -p "$port" XLEN 'richpush:{q0}:dead')" = "30" ] || { echo "error: the worker did not dead-letter the 30 jobs; see $work/worker.log" >&2; exit 1; }
# Stopped: what the console replays then waits in the queue, where the flow can count it.
kill -TERM "$worker"; wait "$worker" || true; worker=""

api_port=$(free_port)
"$bin" api --port "$api_port" --log-level warning --bcrypt-cost 4 2>"$work/api.log" & pids+=($!)
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 300); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { echo "error: the API did not start; see $work/api.log" >&2; exit 1; }
echo "==> API on $base with 30 dead letters; Chromium (headless) opens $base/console"

RICHPUSH_OPS_PASSWORD="${passwords[ops]}" RICHPUSH_VIEW_PASSWORD="${passwords[view]}" RICHPUSH_ROOT_PASSWORD="${passwords[root]}" \
    "$venv/bin/python" scripts/browser/console_flow.py --base "$base" --redis-port "$port" --bin "$bin" \
    --shots "$shots" --profile "$work/chromium" & flow=$!
pids+=($flow)
status=0
wait "$flow" || status=$?
if [ "$status" -ne 0 ]; then
    echo "CONSOLE TEST FAILED; logs in $work, screenshots in $shots" >&2
    exit 1
fi
echo "==> the console went all the way in $((SECONDS - started)) s: sign-in, live overview, exact bulk replay, notification search and timeline, devices, exact cancel of scheduled sends, pause and resume, test send, webhooks, rates and the workers' chart, template preview, viewer refused, audit log; screenshots in $shots"
