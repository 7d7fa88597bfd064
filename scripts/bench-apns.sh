#!/usr/bin/env bash
# Benchmark (not a test): pushes per second through the APNs adapter to a local apns-sim over TLS
# and HTTP/2 on loopback, with a private redis-server for the shared token. The simulator runs as
# its own process (as Apple's servers would be elsewhere); --in-process puts both in one.
# Usage: scripts/bench-apns.sh [--pushes N (100000)] [--batch B (1000)] [--max-streams S (500)]
#          [--connections C (2)] [--concurrency K (1000)] [--fail "429:2%,500:1%"] [--in-process]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config python3 openssl
ensure_swift
private_tmp bench
richpush_binary
bench_binary

bench_args=()
sim_args=()
in_process=0
max_streams=500
while [ $# -gt 0 ]; do
    case "$1" in
        --in-process) in_process=1; shift ;;
        --max-streams) max_streams="$2"; bench_args+=("$1" "$2"); shift 2 ;;
        --fail|--delay-ms|--goaway-every|--seed) sim_args+=("$1" "$2"); shift 2 ;;
        *) bench_args+=("$1"); shift ;;
    esac
done

work=$(mktemp -d "$TMPDIR/apns-XXXX")
sim_pid=""
cleanup() {
    if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
    kill_private_redis "$work"
}
trap cleanup EXIT
port=$(free_port)
start_private_redis "$work/redis" "$port"

if [ "$in_process" = 1 ]; then
    [ ${#sim_args[@]} -eq 0 ] || { echo "--fail, --delay-ms and --goaway-every need the simulator in its own process (drop --in-process)" >&2; exit 2; }
    "$bench_bin" apns --redis-url "redis://127.0.0.1:$port/0" "${bench_args[@]}"
    exit 0
fi
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
apns_port=$(free_port)
"$bin" apns-sim --redis-url "redis://127.0.0.1:$port/0" --port "$apns_port" --team-id BENCHTEAM1 --key-id BENCHKEY01 \
    --key-file "$work/AuthKey.p8" --topic com.example.bench --cert-dir "$work/apns" --max-streams "$max_streams" --no-forward \
    ${sim_args[@]+"${sim_args[@]}"} 2>"$work/apns-sim.log" &
sim_pid=$!
for _ in $(seq 100); do grep -q listening "$work/apns-sim.log" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/apns-sim.log" || { cat "$work/apns-sim.log"; echo "apns-sim did not start" >&2; exit 1; }
${BENCH_WRAP:-} "$bench_bin" apns --redis-url "redis://127.0.0.1:$port/0" --url "https://127.0.0.1:$apns_port" --ca-file "$work/apns/ca.pem" \
    --key-file "$work/AuthKey.p8" ${bench_args[@]+"${bench_args[@]}"}
sim_rss=$(awk '/VmHWM/ {print $2 " kB"}' "/proc/$sim_pid/status" 2>/dev/null || echo "?")
ticks=$(getconf CLK_TCK)
sim_cpu=$(awk -v t="$ticks" '{printf "%.2f s", ($14 + $15) / t}' "/proc/$sim_pid/stat" 2>/dev/null || echo "?")
echo "apns-sim: peak RSS $sim_rss, CPU $sim_cpu (its own process, on the same cores)"
