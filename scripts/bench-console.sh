#!/usr/bin/env bash
# Benchmark (not a test): the operator's console at scale (issue 29's bar: list pages p95 ≤ 300 ms
# and search ≤ 1 s with 1,000,000 dead letters; a bulk replay of 100,000 dead letters within 30 s).
# Fills a private redis-server with scheduled notifications, dead letters and installations in the
# real formats (`richpush-bench console-seed`: the store's batch create, the queue's dead-letter
# script, the installation store, all pipelined), starts `richpush api` with an operator, and
# measures over real HTTP: p50/p95 of each list page, searches by text and by filter, and a bulk
# replay of the dead letters that match a filter (one in ten: 100,000 of 1,000,000), counted and
# confirmed as the console does. Prints a table. Stops exactly what it started.
# Usage: scripts/bench-console.sh [--dead-letters N (1000000)] [--notifications N (1000000)]
#                                 [--devices N (100000)] [--samples N (20)]
# RICHPUSH_BIN=path uses that binary instead of building release.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

dead_letters=1000000
notifications=1000000
devices=100000
samples=20
while [ $# -gt 0 ]; do
    case "$1" in
        --dead-letters) dead_letters=$2; shift 2 ;;
        --notifications) notifications=$2; shift 2 ;;
        --devices) devices=$2; shift 2 ;;
        --samples) samples=$2; shift 2 ;;
        *) echo "unknown option $1 (usage: scripts/bench-console.sh [--dead-letters N] [--notifications N] [--devices N] [--samples N])" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3
ensure_swift
private_tmp bench
richpush_binary
bench_binary
work=$(mktemp -d "$TMPDIR/console-XXXX")
api=""
cleanup() {
    if [ -n "$api" ]; then kill "$api" 2>/dev/null || true; wait "$api" 2>/dev/null || true; fi
    kill_private_redis "$work"
}
trap cleanup EXIT

port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
password=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
echo "$password" | "$bin" users add ops --cost 4 >/dev/null
"$bin" users set-role ops operator >/dev/null

echo "==> seeding $notifications scheduled notifications, $dead_letters dead letters, $devices installations"
seed_started=$SECONDS
"$bench_bin" console-seed --notifications "$notifications" --dead-letters "$dead_letters" --devices "$devices"
echo "==> seeded in $((SECONDS - seed_started)) s; Redis uses $(redis-cli -p "$port" INFO memory | awk -F: '/^used_memory_human/ { print $2 }' | tr -d '\r')"

api_port=$(free_port)
"$bin" api --port "$api_port" --log-level warning --bcrypt-cost 4 2>"$work/api.log" & api=$!
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 300); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { echo "error: the API did not start; see $work/api.log" >&2; exit 1; }

python3 - "$base" "$password" "$samples" "$dead_letters" <<'PY'
import http.client, json, sys, time, urllib.parse
base, password, samples, dead_letters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
url = urllib.parse.urlparse(base)
origin = f"http://{url.hostname}:{url.port}"
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=600)
cookie = ""

def call(method, path, form=None):
    global cookie
    headers = {"Accept": "application/json", "Origin": origin}
    if cookie:
        headers["Cookie"] = cookie
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    started = time.perf_counter()
    connection.request(method, path, body, headers)
    response = connection.getresponse()
    data = response.read()
    took = (time.perf_counter() - started) * 1000
    for name, value in response.getheaders():
        if name.lower() == "set-cookie" and value.startswith("rp_console="):
            cookie = value.split(";")[0]
    if response.status >= 300:
        sys.exit(f"{method} {path}: HTTP {response.status} {data[:300]!r}")
    return took, (json.loads(data) if data[:1] in (b"{", b"[") else None)

call("POST", "/console/login", {"user": "ops", "password": password})

def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]

rows = []
def measure(kind, name, path, bar, note=""):
    times = []
    answer = None
    for _ in range(samples):
        took, answer = call("GET", path)
        times.append(took)
    p50, p95 = pct(times, 0.5), pct(times, 0.95)
    rows.append((kind, name, f"{p50:.0f}", f"{p95:.0f}", f"≤ {bar}", "yes" if p95 <= bar else "NO", note(answer) if callable(note) else note))

def listed(key):
    return lambda answer: f"{len((answer or {}).get(key) or [])} shown" + (", limited" if (answer or {}).get("limited") or (answer or {}).get("complete") is False else "")

measure("page", "dead letters (newest 50)", "/console/dead-letters", 300, listed("deadLetters"))
measure("page", "notifications (newest 50)", "/console/notifications?app=default", 300, listed("notifications"))
measure("page", "queues (next 50 due)", "/console/queues", 300, listed("jobs"))
measure("page", "devices (first page)", "/console/devices?app=default", 300, listed("installations"))
measure("search", "dead letters: text (none match)", "/console/dead-letters?text=no-such-text", 1000, listed("deadLetters"))
measure("search", "dead letters: reason 'timeout' (1 in 10)", "/console/dead-letters?reason=timeout", 1000, listed("deadLetters"))
measure("search", "dead letters: from -1h, app default", "/console/dead-letters?app=default&from=-1h", 1000, listed("deadLetters"))
measure("search", "notifications: tag 'sports' (1 in 10)", "/console/notifications?app=default&tag=sports", 1000, listed("notifications"))
measure("search", "notifications: creator user3", "/console/notifications?app=default&creator=user3", 1000, listed("notifications"))
measure("search", "notifications: state sent (none match)", "/console/notifications?app=default&state=sent", 1000, listed("notifications"))
measure("search", "queues: text, kind scheduled (none match)", "/console/queues?kind=scheduled&text=no-such-text", 1000, listed("jobs"))
measure("search", "devices: tag bench, platform fcm", "/console/devices?app=default&tag=bench&platform=fcm", 1000, listed("installations"))
measure("search", "devices: token prefix (none match)", "/console/devices?app=default&handle=zzz", 1000, listed("installations"))

# The bulk replay: count (the confirmation), then confirm that number; timed from the count.
started = time.perf_counter()
count_took, counted = call("POST", "/console/dead-letters/count", {"reason": "timeout", "action": "replay"})
replay_took, replayed = call("POST", "/console/dead-letters/replay", {"token": counted["token"], "confirm": str(counted["count"])})
total = (time.perf_counter() - started)
done = replayed.get("done", 0)
rows.append(("action", f"count dead letters: reason timeout ({counted['count']})", f"{count_took:.0f}", "", "", "", f"of {dead_letters}"))
rows.append(("action", f"replay {done} by filter (after the count)", f"{replay_took:.0f}", "", "", "", f"{done / max(replay_took / 1000, 1e-9):,.0f} letters/s"))
bar = 30000
rows.append(("action", "count + replay, in all", f"{total * 1000:.0f}", "", f"≤ {bar}", "yes" if total * 1000 <= bar else "NO",
             f"{done / total:,.0f} letters/s"))

widths = [max(len(str(row[i])) for row in rows + [("kind", "what", "p50 ms", "p95 ms", "bar ms", "met", "")]) for i in range(7)]
def line(row):
    return "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
print()
print(line(("kind", "what", "p50 ms", "p95 ms", "bar ms", "met", "")))
print(line(tuple("-" * width for width in widths)))
for row in rows:
    print(line(row))
PY
