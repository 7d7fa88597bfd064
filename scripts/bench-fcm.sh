#!/usr/bin/env bash
# Benchmark (not a test): messages per second and batch latency p50/p99 through the FCM adapter to
# a local fcm-sim over HTTP/2 and TLS on loopback, with a private redis-server for the shared
# access token. The simulator runs as its own process (as Google's servers would be elsewhere),
# with a service account it makes for the run; --in-process puts both in one. The adapter's CPU
# per message is the bench process's.
# Usage: scripts/bench-fcm.sh [--messages N (100000)] [--batch B (1000)] [--connections C (2)]
#          [--fail "429:1%,503:1%"] [--unregistered P%] [--in-process]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config python3 openssl
ensure_swift
private_tmp bench
richpush_binary
bench_binary

bench_args=(--messages 100000)
sim_args=()
in_process=0
while [ $# -gt 0 ]; do
    case "$1" in
        --in-process) in_process=1; shift ;;
        --fail|--unregistered|--seed) sim_args+=("$1" "$2"); shift 2 ;;
        *) bench_args+=("$1" "$2"); shift 2 ;;
    esac
done

work=$(mktemp -d "$TMPDIR/fcm-XXXX")
sim_pid=""
cleanup() {
    if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
    kill_private_redis "$work"
}
trap cleanup EXIT
port=$(free_port)
start_private_redis "$work/redis" "$port"

if [ "$in_process" = 1 ]; then
    [ ${#sim_args[@]} -eq 0 ] || { echo "--fail and --unregistered need the simulator in its own process (drop --in-process)" >&2; exit 2; }
    "$bench_bin" fcm --redis-url "redis://127.0.0.1:$port/0" --port "$(free_port)" "${bench_args[@]}"
    exit 0
fi
fcm_port=$(free_port)
# The bench measures the adapter: FCM's default project quota (10,000/s) would be the limit.
"$bin" fcm-sim --redis-url "redis://127.0.0.1:$port/0" --port "$fcm_port" --service-account "$work/fcm/service-account.json" \
    --make-credentials --cert-dir "$work/fcm" --project-quota 100000000 --no-forward ${sim_args[@]+"${sim_args[@]}"} 2>"$work/fcm-sim.log" &
sim_pid=$!
for _ in $(seq 100); do grep -q listening "$work/fcm-sim.log" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/fcm-sim.log" || { cat "$work/fcm-sim.log"; echo "fcm-sim did not start" >&2; exit 1; }
${BENCH_WRAP:-} "$bench_bin" fcm --redis-url "redis://127.0.0.1:$port/0" --url "https://127.0.0.1:$fcm_port" \
    --service-account "$work/fcm/service-account.json" --ca-file "$work/fcm/ca.pem" "${bench_args[@]}"
sim_rss=$(awk '/VmHWM/ {print $2 " kB"}' "/proc/$sim_pid/status" 2>/dev/null || echo "?")
ticks=$(getconf CLK_TCK)
sim_cpu=$(awk -v t="$ticks" '{printf "%.2f s", ($14 + $15) / t}' "/proc/$sim_pid/stat" 2>/dev/null || echo "?")
echo "fcm-sim: peak RSS $sim_rss, CPU $sim_cpu (its own process, on the same cores)"
