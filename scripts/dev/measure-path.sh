#!/usr/bin/env bash
# Measures the path of one notification from the code as it runs, not from its description: a
# debug build whose Swift functions each report their first run (scripts/dev/path-trace/trace.c,
# through -sanitize-coverage=func,trace-pc-guard; AddressSanitizer, which that option needs,
# checks the run on the way) runs the API, one worker and one device simulator on a private
# redis-server. After an idle window of the same length (what runs anyway: timers, polls), one
# JSON POST /api/notifications of the default app goes to the device, which fetches it and opens
# it; every process's record then lists, in time order across the processes, the functions of
# Sources/ that ran for it. scripts/dev/path_report.py turns that into files, stops and returns
# (a stop is a run of functions in one file; a return is a stop in a file already read).
# Output: .tmp/path/path.md (the list) and .tmp/path/path.json (the counts); with --write, the
# counts and the list go into docs/path-measured.md, which docs/architecture.md quotes and
# ArchitecturePathTests checks against the sources.
# Usage: scripts/dev/measure-path.sh [--write]   (the first build takes 5-10 minutes; .build-trace/)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh
write=0
[ "${1:-}" = --write ] && write=1
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3 llvm
ensure_swift
work="$PWD/.tmp/path"
rm -rf "$work/run" && mkdir -p "$work/run"
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work/run"
}
trap cleanup EXIT

echo "==> building the traced binary (.build-trace)"
clang -O1 -c scripts/dev/path-trace/trace.c -o "$work/trace.o"
swift build --scratch-path .build-trace --product richpush -Xswiftc -sanitize=address \
    -Xswiftc -sanitize-coverage=func,trace-pc-guard -Xlinker "$work/trace.o" 2>&1 | grep -E "error|Build complete" || true
bin="$(swift build --scratch-path .build-trace --show-bin-path)/richpush"
[ -x "$bin" ] || { echo "build failed" >&2; exit 1; }
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1

port=$(free_port)
start_private_redis "$work/run/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
password=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
echo "$password" | "$bin" users add demo >/dev/null
api_port=$(free_port)
base="http://127.0.0.1:$api_port"
RICHPUSH_PATH_TRACE="$work/run/api" "$bin" api --port "$api_port" --log-level warning 2>"$work/run/api.log" & pids+=($!)
RICHPUSH_PATH_TRACE="$work/run/worker" "$bin" worker --consumer path-worker --log-level warning --api-base-url "$base" \
    2>"$work/run/worker.log" & pids+=($!)
for _ in $(seq 1 600); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { echo "the API did not start; see $work/run/api.log" >&2; exit 1; }
RICHPUSH_PASSWORD="$password" RICHPUSH_PATH_TRACE="$work/run/device" "$bin" device-sim --api "$base" --user demo --devices 1 \
    --app-state active --tap more --fire-delay 0 --count 0 --out "$work/run/device-out" \
    >"$work/run/device.out" 2>"$work/run/device.err" & device=$!
pids+=($device)
for _ in $(seq 1 600); do grep -q listening "$work/run/device.err" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/run/device.err" || { echo "the device simulator did not start:" >&2; cat "$work/run/device.err" >&2; exit 1; }
roles=(api worker device)

# signal SUFFIX ANSWER: asks every process of roles and waits for each one's answer.
signal() {
    for role in "${roles[@]}"; do rm -f "$work/run/$role$2"; touch "$work/run/$role$1"; done
    for role in "${roles[@]}"; do
        for _ in $(seq 1 600); do [ -e "$work/run/$role$2" ] && break; sleep 0.05; done
        [ -e "$work/run/$role$2" ] || { echo "$role did not answer $1 (is it the traced build?)" >&2; exit 1; }
    done
}
# send: one notification to the device, until it is opened; prints its id.
send() {
    curl -sf -u "demo:$password" -H 'Content-Type: application/json' "$base/api/notifications" \
        -d '{"richType":"text","payload":"The path, measured","target":"username:demo"}' >"$work/run/accepted.json"
    local id state=""
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/run/accepted.json")
    for _ in $(seq 1 600); do
        state=$(curl -sf -u "demo:$password" "$base/api/notifications/$id/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
        [ "$state" = opened ] && break
        sleep 0.1
    done
    [ "$state" = opened ] || { echo "notification $id ended $state, not opened; see $work/run" >&2; exit 1; }
    echo "$id"
}
# A warm-up push first, so what runs once per process (connections, scripts loaded) is not the
# notification's; then the measured one, with every function re-armed in the three processes.
send >/dev/null
signal .arm .armed
start=$(date +%s.%N)
send >/dev/null
elapsed=$(python3 -c "import time; print(round(time.time() - $start, 2))")
signal .dump .done
for role in "${roles[@]}"; do mv "$work/run/$role.trace" "$work/run/$role.path.trace"; done
# The idle window: as long as the path took, nothing sent: what runs anyway (timers, polls).
signal .arm .armed
sleep "$elapsed"
signal .dump .done
for role in "${roles[@]}"; do mv "$work/run/$role.trace" "$work/run/$role.idle.trace"; done
echo "==> one notification took $elapsed s from the POST to the opened state (traced build)"

python3 scripts/dev/path_report.py --binary "$bin" --sources "$PWD/Sources" --work "$work/run" \
    --commit "$(git rev-parse --short HEAD)" --out "$work/path.md" --json "$work/path.json" $([ "$write" = 1 ] && echo --write docs/path-measured.md)
cat "$work/path.json"
