#!/usr/bin/env bash
# Load test (not a test): the full pipeline on this machine. Starts a private redis-server, the
# API, K workers, registers M simulated devices and sends N notifications, one device each.
# --mode silent counts pushes delivered to devices; --mode rich adds the background fetch and
# the local notification (fire delay 0). Prints throughput, latency percentiles, lost and
# duplicated counts, and every process's peak RSS.
# --audience all sends every notification to every device (N fan-outs of M pushes each).
# Shapes of load: as fast as possible (default), --rate R (constant), --shape ramp --rate R
# (0 up to R per second), --shape burst --burst-size B --burst-interval S.
# --report DIR writes DIR/report.json, DIR/report.html (charts) and DIR/overview.svg.
# Usage: scripts/loadtest.sh [--notifications N] [--devices M] [--workers K] [--mode silent|rich]
#                            [--audience one|all] [--rate R] [--shape max|constant|ramp|burst]
#                            [--burst-size B] [--burst-interval S] [--report DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

notifications=100000 devices=1000 workers=2 mode=silent audience=one
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --notifications) notifications=$2; shift 2 ;;
        --devices) devices=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --audience) audience=$2; shift 2 ;;
        --rate|--shape|--burst-size|--burst-interval|--timeout) extra+=("$1" "$2"); shift 2 ;;
        --report) mkdir -p "$2"; extra+=(--report "$(cd "$2" && pwd)"); shift 2 ;;
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
# One user drives the whole load: its quotas are off (they guard a shared service from one tenant).
"$bin" api --port "$api_port" --log-level warning --quota-notifications-per-minute 0 --quota-payload-bytes 0 --quota-registrations 0 --quota-tags 0 --bcrypt-cost 4 2>"$work/api.log" & pids+=($!)
api_pid=$!
worker_pids=()
for i in $(seq 1 "$workers"); do
    "$bin" worker --consumer "load-$i" --concurrency 64 --batch-size 128 --log-level warning 2>"$work/worker-$i.log" & pids+=($!)
    worker_pids+=($!)
done
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$api_port/health/ready" >/dev/null && break; sleep 0.1; done

watch=(--watch-pid "api=$api_pid" --watch-pid "redis=$(cat "$work/redis/redis.pid")")
for i in "${!worker_pids[@]}"; do watch+=(--watch-pid "worker-$((i + 1))=${worker_pids[$i]}"); done

echo "==> $notifications notifications to $devices devices (audience $audience), $workers workers, mode $mode ${extra[*]}"
redis-cli -p "$port" config resetstat >/dev/null
"$bin" loadtest --api "http://127.0.0.1:$api_port" --user load --notifications "$notifications" --devices "$devices" \
    --mode "$mode" --audience "$audience" --workers "$workers" "${watch[@]}" "${extra[@]}"
# Redis commands per notification (INFO commandstats; commands run inside scripts count too, and
# the device registrations and the simulator's own commands are included).
redis-cli -p "$port" info commandstats | python3 -c '
import sys
calls = {line.split(":")[0][8:]: int(line.split("calls=")[1].split(",")[0]) for line in sys.stdin if line.startswith("cmdstat_")}
n = int(sys.argv[1])
top = ", ".join(f"{name} {count / n:.2f}" for name, count in sorted(calls.items(), key=lambda item: -item[1])[:8])
scripts = calls.get("evalsha", 0) / n
print(f"==> Redis ran {sum(calls.values()) / n:.1f} commands per notification ({scripts:.2f} EVALSHA): {top}")
' "$notifications"
