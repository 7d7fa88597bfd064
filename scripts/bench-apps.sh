#!/usr/bin/env bash
# Benchmark (not a test): what serving many apps costs. Two runs of the same load, each on its
# own private redis-server, API and worker (the simulated hub; every push is held for its
# device):
#   single: 10 users of the default app send, each to one device of their own;
#   apps:   1,000 apps exist and 10 of them send the same way, one user and one device each.
# Sender i sends to its own device (tag news-i), so a notification is one push in both runs.
# Each run posts notifications with wrk for SECONDS (2 threads, 20 connections, the 10 users'
# credentials in turn), then starts the worker and waits until it has processed every job. Prints
# per run the API's notifications created per second, the worker's deliveries per second (jobs
# processed / the time from its start until the queue is empty) and its RSS then, and the ratios
# (issue 27's targets: throughput within 10 %, RSS within 10 MiB).
# Usage: scripts/bench-apps.sh [SECONDS]   (default 20)
# RICHPUSH_BIN=path benchmarks that richpush instead of building release.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

seconds=${1:-20}
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config wrk curl
ensure_swift
private_tmp bench-apps

richpush_binary

dir=$(mktemp -d "$TMPDIR/apps-XXXX")
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$dir"
    rm -rf "$dir"
}
trap cleanup EXIT

"$bin" apps new-kek > "$dir/kek"
head -c 48 /dev/urandom | base64 -w0 > "$dir/operator"

run() { # MODE (single | apps)
    local mode=$1 run_dir="$dir/$1"
    mkdir -p "$run_dir"
    local redis_port api_port
    redis_port=$(free_port)
    api_port=$(free_port)
    start_private_redis "$run_dir" "$redis_port"
    export RICHPUSH_REDIS_URL="redis://127.0.0.1:$redis_port/0"
    "$bin" api --port "$api_port" --log-level warning --kek-file "$dir/kek" --operator-token-file "$dir/operator" \
        --quota-notifications-per-minute 0 --quota-payload-bytes 0 2>"$run_dir/api.log" &
    local api_pid=$!
    pids+=("$api_pid")
    local base="http://127.0.0.1:$api_port"
    for _ in $(seq 1 200); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

    local users=()
    if [ "$mode" = apps ]; then
        # 1,000 apps, over one keep-alive connection; the first 10 send.
        python3 - "$base" "$dir/operator" <<'PY'
import http.client, json, sys, urllib.parse
base, token = sys.argv[1], open(sys.argv[2]).read().strip()
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port)
for index in range(1000):
    connection.request("POST", "/api/apps", json.dumps({"id": f"app-{index:04d}"}),
                       {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    if response.status != 201:
        sys.exit(f"creating app-{index:04d}: {response.status}")
PY
        for index in $(seq 0 9); do
            echo "pw-$index" | "$bin" users add "sender" --app "app-000$index" --role admin --cost 4 >/dev/null
            users+=("sender@app-000$index:pw-$index")
        done
    else
        for index in $(seq 0 9); do
            echo "pw-$index" | "$bin" users add "sender-$index" --role admin --cost 4 >/dev/null
            users+=("sender-$index:pw-$index")
        done
    fi
    # One device per sender, carrying the tag it is sent to.
    for index in $(seq 0 9); do
        curl -sf -u "${users[$index]}" -X PUT -H 'Content-Type: application/json' \
            -d "{\"Platform\": \"apns\", \"Handle\": \"device-$index\", \"Tags\": [\"news-$index\"]}" "$base/api/register/device-$index" >/dev/null
    done


    {
        echo 'local headers = {'
        for user in "${users[@]}"; do echo "  \"Basic $(printf '%s' "$user" | base64 -w0)\","; done
        echo '}'
        cat <<'LUA'
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  local sender = n % #headers
  wrk.headers["Authorization"] = headers[sender + 1]
  -- Each sender to its own device (tag news-<i>): one push per notification in both runs.
  wrk.body = '{"message":"bench","richType":"text","payload":"bench","target":"news-' .. sender .. '"}'
  return wrk.format()
end
LUA
    } > "$run_dir/post.lua"

    # The notifications first, then the worker alone on them: its throughput is not the API's.
    wrk -t2 -c20 -d"${seconds}s" -s "$run_dir/post.lua" "$base/api/notifications" > "$run_dir/wrk.txt"
    local start end
    start=$(date +%s.%N)
    "$bin" worker --adapter simulated --log-level warning --kek-file "$dir/kek" 2>"$run_dir/worker.log" &
    local worker_pid=$!
    pids+=("$worker_pid")
    # Drained: nothing undelivered or pending, and every created job processed.
    for _ in $(seq 1 1200); do
        if "$bin" stats --json > "$run_dir/stats.json" 2>/dev/null && python3 - "$run_dir/stats.json" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
sys.exit(0 if stats["lag"] == 0 and stats["pending"] == 0 and stats["delayed"] == 0 else 1)
PY
        then break; fi
        sleep 0.25
    done
    end=$(date +%s.%N)
    local rss
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$worker_pid/status")
    local non2xx
    non2xx=$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$run_dir/wrk.txt" | grep -o '[0-9]*$' || echo 0)
    # Every notification is one job (one device each): the jobs processed are the deliveries.
    local api_rps
    api_rps=$(grep -o 'Requests/sec: *[0-9.]*' "$run_dir/wrk.txt" | grep -o '[0-9.]*$')
    python3 - "$mode" "$start" "$end" "$rss" "$non2xx" "$run_dir/stats.json" "$api_rps" > "$run_dir/result" <<'PY'
import json, sys
mode, start, end, rss, non2xx, stats, api = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], json.load(open(sys.argv[6])), float(sys.argv[7])
processed, failed = stats.get("processed", 0), stats.get("failed", 0)
rate = processed / (end - start)
print(f"{rate:.1f} {rss}")
sys.stderr.write(f"{mode:<7} API {api:7,.0f} notifications/s created ({non2xx} non-2xx); worker {processed:>7,} delivered ({failed} failed jobs) "
                 f"in {end - start:5.1f} s: {rate:7,.0f}/s, RSS {rss / 1024:6.1f} MiB\n")
PY
    kill "$worker_pid" "$api_pid"
    wait "$worker_pid" "$api_pid" 2>/dev/null || true
    kill_private_redis "$run_dir"
}

echo "==> $seconds s of sends per run"
run single
run apps
python3 - "$dir/single/result" "$dir/apps/result" <<'PY'
import sys
(single_rate, single_rss), (apps_rate, apps_rss) = ([float(x) for x in open(p).read().split()] for p in sys.argv[1:3])
print(f"apps/single throughput {apps_rate / single_rate:.3f} (target >= 0.90)   worker RSS apps - single {(apps_rss - single_rss) / 1024:+.1f} MiB (target <= 10)")
PY
