#!/usr/bin/env bash
# Benchmark (not a test): the job queue end to end on a private redis-server.
# Enqueues N noop jobs (pipelined), runs W worker processes, and prints the enqueue rate,
# end-to-end jobs/s, latency enqueue→handled (p50/p99/max) and the workers' peak RSS; then
# runs again at half the measured rate, where the latency target applies.
# Usage: scripts/bench-queue.sh [JOBS] [WORKERS]      (defaults 200000, 2; RICHPUSH_BIN: a built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

jobs=${1:-200000}
workers=${2:-2}
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config
ensure_swift
private_tmp bench

richpush_binary
bench_binary

pids=()
bench_redis
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    stop_bench_redis
}
trap cleanup EXIT

run() { # LABEL RATE
    local label=$1 rate=$2
    redis-cli -p "$port" flushall >/dev/null
    pids=()
    for i in $(seq 1 "$workers"); do
        "$bench_bin" worker --redis-url "$url" --concurrency 256 --batch-size 256 --latency-key bench:latency \
            --log-level warning --consumer "bench-$i" 2>"$dir/worker-$i.log" &
        pids+=($!)
    done
    sleep 0.5
    local result
    result=$("$bench_bin" queue --redis-url "$url" --jobs "$jobs" --rate "$rate")
    local rss=()
    for pid in "${pids[@]}"; do rss+=("$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")"); done
    for pid in "${pids[@]}"; do kill -TERM "$pid"; done
    for pid in "${pids[@]}"; do wait "$pid"; done
    redis-cli -p "$port" --raw lrange bench:latency 0 -1 > "$dir/latency.txt"
    python3 - "$label" "$result" "$dir/latency.txt" "${rss[*]}" <<'PY'
import json, sys
label, result, path, rss = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], sys.argv[4].split()
samples = sorted(int(line) for line in open(path) if line.strip().lstrip('-').isdigit())
def pct(p): return samples[min(len(samples) - 1, int(p / 100 * len(samples)))] / 1000
print(f"[{label}] jobs {int(result['jobs'])}: enqueue {result['enqueuePerSecond']:,.0f} jobs/s, "
      f"end-to-end {result['endToEndPerSecond']:,.0f} jobs/s")
print(f"[{label}] latency enqueue->handled ms: p50 {pct(50):.2f}  p99 {pct(99):.2f}  max {samples[-1]/1000:.2f}  "
      f"({len(samples)} samples)")
print(f"[{label}] worker peak RSS MiB: " + ", ".join(f"{int(k)/1024:.1f}" for k in rss))
PY
    echo "$result" > "$dir/last.json"
}

echo "==> full speed: $jobs jobs, $workers workers"
run "max" 0
half=$(python3 -c "import json; print(int(json.load(open('$dir/last.json'))['endToEndPerSecond'] / 2))")
echo "==> half rate: $half jobs/s"
run "half" "$half"
echo "targets: enqueue >= 150000 jobs/s, end-to-end >= 50000 jobs/s, p99 <= 10 ms at half rate"
