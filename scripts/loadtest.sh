#!/usr/bin/env bash
# Load test (not a test): the full pipeline on this machine. Starts a private redis-server, the
# API, K workers, registers M simulated devices and sends N notifications, one device each.
# --mode silent counts pushes delivered to devices; --mode rich adds the background fetch and
# the local notification (fire delay 0). Prints throughput, latency percentiles, lost and
# duplicated counts, and every process's peak RSS.
# --audience all sends every notification to every device (N fan-outs of M pushes each).
# Usage: scripts/loadtest.sh [--notifications N] [--devices M] [--workers K] [--mode silent|rich]
#                            [--audience one|all] [--rate R]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

notifications=100000 devices=1000 workers=2 mode=silent rate=0 audience=one
while [ $# -gt 0 ]; do
    case "$1" in
        --notifications) notifications=$2; shift 2 ;;
        --devices) devices=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --audience) audience=$2; shift 2 ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl
ensure_swift
private_tmp loadtest
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    kill_private_redis "$TMPDIR"
}
trap cleanup EXIT

build_release
port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
export RICHPUSH_PASSWORD=load-pw
echo "$RICHPUSH_PASSWORD" | "$bin" users add load --role admin --cost 4 >/dev/null
api_port=$(free_port)
"$bin" api --port "$api_port" --log-level warning 2>"$work/api.log" & pids+=($!)
api_pid=$!
worker_pids=()
for i in $(seq 1 "$workers"); do
    "$bin" worker --consumer "load-$i" --concurrency ${CONCURRENCY:-64} --batch-size ${BATCH:-128} --log-level warning 2>"$work/worker-$i.log" & pids+=($!)
    worker_pids+=($!)
done
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$api_port/health/ready" >/dev/null && break; sleep 0.1; done

echo "==> $notifications notifications to $devices devices (audience $audience), $workers workers, mode $mode"
/usr/bin/time -f "%M %U %S" -o "$work/loadtest.rss" "$bin" loadtest --api "http://127.0.0.1:$api_port" --user load \
    --notifications "$notifications" --devices "$devices" --mode "$mode" --audience "$audience" --rate "$rate" --json "$work/report.json" >/dev/null
rss() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
cpu() { awk -v t="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / t}' "/proc/$1/stat"; }
python3 - "$work/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"delivered to devices   {r['deliveredPerSecond']:,.0f} pushes/s")
if r["mode"] == "rich":
    print(f"local notifications    {r['notifiedPerSecond']:,.0f} /s (after the background fetch)")
def p(name):
    d = r[name]
    return "  ".join(f"{k} {d[k]:.1f}" for k in ("p50", "p90", "p99", "max")) if d else "n/a"
print(f"enqueue -> device      ms: {p('latencyEnqueueToDeviceMs')}")
if r["mode"] == "rich":
    print(f"enqueue -> notified    ms: {p('latencyEnqueueToLocalNotificationMs')}")
print(f"lost {r['lost']}  duplicated {r['duplicated']}  failed {r['failed']}")
PY
echo "peak RSS MiB: api $(rss "$api_pid"), workers $(for p in "${worker_pids[@]}"; do printf '%s ' "$(rss "$p")"; done), loadtest+devices $(awk '{printf "%.1f", $1/1024}' "$work/loadtest.rss"), redis $(rss "$(cat "$work/redis/redis.pid")")"
echo "CPU seconds: api $(cpu "$api_pid"), workers $(for p in "${worker_pids[@]}"; do printf '%s ' "$(cpu "$p")"; done), loadtest+devices $(awk '{printf "%.1f", $2 + $3}' "$work/loadtest.rss"), redis $(cpu "$(cat "$work/redis/redis.pid")")"
