#!/usr/bin/env bash
# Benchmark (not a test): one `richpush-bench api` (`richpush api` plus GET /bench/hello) under
# wrk on loopback (2 threads, 64 connections, keep-alive): GET of a 10 KiB image, POST of a 1 KiB
# notification, and the server's own hello-world route as the ceiling, all in one run.
# Usage: scripts/bench-api.sh [SECONDS]   (default 10 per measurement)
# RICHPUSH_BIN=path benchmarks the richpush-bench beside that richpush (or RICHPUSH_BENCH_BIN)
# instead of building release (a before/after comparison).
# Each line also gives the API process's CPU per request (user + system, from /proc), which
# compares builds better than req/s on a machine the load generator shares.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

seconds=${1:-10}
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config wrk
ensure_swift
private_tmp bench

richpush_binary
bench_binary

dir=$(mktemp -d "$TMPDIR/api-XXXX")
redis_port=$(free_port)
api_port=$(free_port)
api_pid=""
cleanup() {
    [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
    kill_private_redis "$dir"
    rm -rf "$dir"
}
trap cleanup EXIT
start_private_redis "$dir" "$redis_port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$redis_port/0"

echo 'bench-pw' | "$bin" users add bench --cost 10 >/dev/null
"$bench_bin" api --port "$api_port" --log-level warning --quota-notifications-per-minute 0 --quota-payload-bytes 0 ${API_ARGS:-} 2>"$dir/api.log" &
api_pid=$!
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

auth="Authorization: Basic $(printf 'bench:bench-pw' | base64)"
head -c 10240 /dev/urandom > "$dir/image.bin"
id=$(curl -sf -H "$auth" -F message=bench -F "image=@$dir/image.bin;type=image/png" "$base/api/notifications" \
     | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')

payload=$(head -c 1024 /dev/urandom | base64 -w0)
cat > "$dir/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Basic $(printf 'bench:bench-pw' | base64)"
wrk.body = '{"message":"bench","richType":"img","contentType":"image/png","payload":"$payload"}'
LUA

# The API's CPU time (user + system, clock ticks) from /proc.
api_ticks() { awk '{print $14 + $15}' "/proc/$api_pid/stat"; }

measure() { # LABEL ARGS...
    local label=$1
    shift
    local before after
    before=$(api_ticks)
    wrk -t2 -c64 -d"${seconds}s" --latency "$@" > "$dir/$label.txt"
    after=$(api_ticks)
    python3 - "$label" "$dir/$label.txt" "$((after - before))" "$(getconf CLK_TCK)" <<'PY'
import re, sys
label, text = sys.argv[1], open(sys.argv[2]).read()
ticks, per_second = int(sys.argv[3]), int(sys.argv[4])
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
def ms(p):
    m = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", text)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
requests = int(re.search(r"(\d+) requests in", text).group(1))
# The API's CPU per request: what the server spends, whatever the load generator beside it takes.
cpu = ticks / per_second * 1e6 / max(requests, 1)
print(f"{label:<7} {rps:>10,.0f} req/s   p50 {ms(50):6.2f} ms   p99 {ms(99):6.2f} ms   API CPU {cpu:6.1f} µs/request   non-2xx {errors.group(1) if errors else 0}")
open(f"{sys.argv[2]}.rps", "w").write(str(rps))
PY
}

echo "==> wrk -t2 -c64 -d${seconds}s against $base"
measure hello "$base/bench/hello"
measure get -H "$auth" "$base/api/notifications/$id"
measure post -s "$dir/post.lua" "$base/api/notifications"
python3 - "$dir" <<'PY'
import sys
d = sys.argv[1]
hello, get, post = (float(open(f"{d}/{n}.txt.rps").read()) for n in ("hello", "get", "post"))
print(f"GET/hello {get / hello:.2f} (target >= 0.70)   POST/hello {post / hello:.2f} (target >= 0.50)")
PY
