#!/usr/bin/env bash
# Benchmark (not a test): a templated fan-out against the plain one, in the same run, on the
# release build. One redis-server, one API, one worker (simulated hub: every push is held in
# Redis, no device online, the same work for both kinds), and two audiences of --devices each:
#   plain: installations without templates (today's rich push);
#   tpl:   installations in 3 languages (en-US, fr-CA, de-DE), half APNs, half FCM, each with
#          2 templates ("a-breaking" for sends tagged breaking, "b-news" for the rest: the send
#          picks b-news), sent localized properties in the three languages.
# Each round sends one notification to each audience (plain first, then tpl) and times it from
# the POST until the status counts every device; the worker's CPU time (/proc/PID/stat) over each
# send gives the CPU per push, and the difference, the rendering CPU per push.
# Usage: scripts/bench-templates-fanout.sh [--devices N (10000)] [--rounds R (3)]
#        (RICHPUSH_BIN=path uses that binary instead of building the release)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

devices=10000 rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools curl
ensure_swift
private_tmp bench-templates-fanout
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work"
    rm -rf "$work"
}
trap cleanup EXIT

richpush_binary
port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
echo "bench-pw" | "$bin" users add bench --role admin --cost 4 >/dev/null
api_port=$(free_port)
"$bin" api --port "$api_port" --log-level warning --quota-notifications-per-minute 0 --quota-payload-bytes 0 --quota-registrations 0 \
    --quota-tags 0 --bcrypt-cost 4 2>"$work/api.log" & pids+=($!)
"$bin" worker --consumer bench-1 --concurrency 64 --batch-size 128 --log-level warning 2>"$work/worker.log" & pids+=($!)
worker_pid=$!
base="http://127.0.0.1:$api_port"
for _ in $(seq 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

echo "==> registering $devices plain and $devices templated installations"
python3 - "$base" "$devices" <<'PY'
import base64, http.client, json, sys, threading
base, count = sys.argv[1], int(sys.argv[2])
host, port = base.replace("http://", "").split(":")
auth = "Basic " + base64.b64encode(b"bench:bench-pw").decode()
apns = {"a-breaking": {"Body": '{"aps":{"alert":{"title":"{\'BREAKING: \' + $(title)}","body":"$(body)"}},"richId":"$(richId)"}', "Tags": ["breaking"]},
        "b-news": {"Body": '{"aps":{"alert":{"title":"$(title)","body":".(body, 80)"},"badge":"#(badge)"},"richId":"$(richId)","richUrl":"$(richUrl)"}'}}
fcm = {"a-breaking": {"Body": '{"data":{"title":"{\'BREAKING: \' + $(title)}","body":"$(body)","richId":"$(richId)"}}', "Tags": ["breaking"]},
       "b-news": {"Body": '{"data":{"title":"$(title)","body":".(body, 80)","richId":"$(richId)","richUrl":"$(richUrl)"},"android":{"priority":"high"}}'}}
locales = ["en-US", "fr-CA", "de-DE"]
def body(kind, i):
    platform = "apns" if i % 2 == 0 else "fcm"
    handle = ("%064x" % (i + (0 if kind == "plain" else 10**9))) if platform == "apns" else "fcm-%s-%d" % (kind, i)
    b = {"Platform": platform, "Handle": handle, "Tags": [kind]}
    if kind == "tpl":
        b["Templates"] = apns if platform == "apns" else fcm
        b["Locale"] = locales[i % 3]
    return json.dumps(b)
errors = []
def run(items):
    conn = http.client.HTTPConnection(host, int(port))
    for kind, i in items:
        conn.request("PUT", "/api/register/%s-%d" % (kind, i), body(kind, i), {"Authorization": auth, "Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        if response.status != 200: errors.append(data[:200])
items = [(kind, i) for kind in ("plain", "tpl") for i in range(count)]
threads = [threading.Thread(target=run, args=(items[k::16],)) for k in range(16)]
for t in threads: t.start()
for t in threads: t.join()
if errors: sys.exit("registration failed: %s" % errors[:3])
PY

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks=$(getconf CLK_TCK)
# send KIND: one notification to audience KIND; prints "seconds cpu_ticks".
send() {
    local kind=$1 body id key start done_at before after
    if [ "$kind" = tpl ]; then
        body='{"richType":"text","payload":"the full story","target":"tpl","properties":{"title":{"en":"Goal!","fr":"But !","de":"Tor!"},"body":{"en":"A late winner in the derby, after ninety minutes of a match nobody will forget soon","fr":"Un but tardif dans le derby","de":"Ein spätes Siegtor im Derby"},"badge":3}}'
    else
        body='{"richType":"text","payload":"the full story","target":"plain"}'
    fi
    before=$(cpu "$worker_pid")
    start=$(date +%s.%N)
    id=$(curl -sf -u bench:bench-pw "$base/api/notifications" -H 'Content-Type: application/json' -d "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
    key=""
    while :; do
        [ -z "$key" ] && key=$(redis-cli -p "$port" --scan --pattern "*:notif:$id" | head -1)
        if [ -n "$key" ]; then
            done_count=$(redis-cli -p "$port" hmget "$key" sent held failed | awk '{s += $1} END {print s}')
            [ "$done_count" -ge "$devices" ] && break
        fi
        sleep 0.02
    done
    done_at=$(date +%s.%N)
    after=$(cpu "$worker_pid")
    failed=$(redis-cli -p "$port" hget "$key" failed)
    [ -z "$failed" ] || [ "$failed" = 0 ] || echo "warning: $failed pushes of $kind failed" >&2
    echo "$(echo "$done_at - $start" | bc -l) $((after - before))"
}

echo "==> $rounds rounds of one fan-out to $devices devices each, plain then templated"
: >"$work/results"
for round in $(seq 1 "$rounds"); do
    read -r plain_s plain_cpu < <(send plain)
    read -r tpl_s tpl_cpu < <(send tpl)
    echo "$plain_s $plain_cpu $tpl_s $tpl_cpu" >>"$work/results"
    printf "round %d: plain %.3f s (%d ticks CPU), templated %.3f s (%d ticks CPU)\n" "$round" "$plain_s" "$plain_cpu" "$tpl_s" "$tpl_cpu"
done
python3 - "$work/results" "$devices" "$ticks" <<'PY'
import sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
devices, ticks = int(sys.argv[2]), int(sys.argv[3])
plain_s = sum(r[0] for r in rows); tpl_s = sum(r[2] for r in rows)
plain_cpu = sum(r[1] for r in rows) / ticks; tpl_cpu = sum(r[3] for r in rows) / ticks
pushes = devices * len(rows)
plain_rate, tpl_rate = pushes / plain_s, pushes / tpl_s
print("plain fan-out:     %8.0f pushes/s, worker CPU %.1f µs per push" % (plain_rate, plain_cpu / pushes * 1e6))
print("templated fan-out: %8.0f pushes/s, worker CPU %.1f µs per push" % (tpl_rate, tpl_cpu / pushes * 1e6))
print("templated / plain: %.1f %% of the pushes/s" % (tpl_rate / plain_rate * 100))
print("rendering CPU per push (templated minus plain, worker): %.1f µs (CPU time at %d ticks/s)" % ((tpl_cpu - plain_cpu) / pushes * 1e6, ticks))
PY
