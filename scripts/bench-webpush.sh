#!/usr/bin/env bash
# Benchmark (not a test): pushes per second and batch latency p50/p99 through the Web Push adapter
# to a local webpush-sim over TLS on loopback, the simulator in its own process (as a push service
# would be elsewhere). Each push is encrypted to its own browser's keys (RFC 8291) and carries the
# origin's VAPID token (RFC 8292); the figures say how many tokens the run signed. The adapter's
# CPU per push is the bench process's.
# Usage: scripts/bench-webpush.sh [--pushes N (100000)] [--batch B (1000)] [--browsers K (100)]
#          [--concurrency C (128)] [--connections N (8)] [--in-flight K (1)] [--fail "429:1%,503:1%"]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config openssl
ensure_swift
private_tmp bench
richpush_binary
bench_binary

bench_args=()
sim_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --fail|--seed|--delay-ms) sim_args+=("$1" "$2"); shift 2 ;;
        *) bench_args+=("$1" "$2"); shift 2 ;;
    esac
done

work=$(mktemp -d "$TMPDIR/webpush-XXXX")
sim_pid=""
cleanup() {
    if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
sim_port=$(free_port)
"$bin" webpush-sim --port "$sim_port" --cert-dir "$work/webpush" --http2-frames ${sim_args[@]+"${sim_args[@]}"} 2>"$work/webpush-sim.log" &
sim_pid=$!
for _ in $(seq 100); do grep -q listening "$work/webpush-sim.log" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/webpush-sim.log" || { cat "$work/webpush-sim.log"; echo "webpush-sim did not start" >&2; exit 1; }
${BENCH_WRAP:-} "$bench_bin" webpush --url "https://127.0.0.1:$sim_port" --ca-file "$work/webpush/ca.pem" ${bench_args[@]+"${bench_args[@]}"}
sim_rss=$(awk '/VmHWM/ {print $2 " kB"}' "/proc/$sim_pid/status" 2>/dev/null || echo "?")
ticks=$(getconf CLK_TCK)
sim_cpu=$(awk -v t="$ticks" '{printf "%.2f s", ($14 + $15) / t}' "/proc/$sim_pid/stat" 2>/dev/null || echo "?")
echo "webpush-sim: peak RSS $sim_rss, CPU $sim_cpu (its own process, on the same cores)"
