#!/usr/bin/env bash
# Benchmark (not a test): how many rich notifications reach the screen under the platforms' rules
# (docs/devices.md). A fleet of simulated iPhones and Android phones in realistic conditions gets
# a compressed day of rich pushes (one an hour, or in bursts, simulated), once per delivery
# strategy (silent, alert, auto: chosen per device by the workers), each on a
# pipeline of its own (private redis-server, the API, two workers, one device-sim process with
# the strict rules); then scripts/reach/report.py reads what every device did and reports, per
# strategy and platform, the (notification, device) pairs shown with their content at once
# (never deferred, held or caught up), later in the day, or never (with the reason), and the
# pushes the hub spent. Ends with one line per strategy: `<strategy> <x> % shown …`, and writes a
# chart of them all to .tmp/bench/reach-report.html.
# Usage: scripts/bench-reach.sh [--devices N (2000)] [--notifications K (24)] [--time-scale S (600)]
#                               [--strategies "silent alert auto"] [--schedule hourly|bursts]
#                               [--population P] [--seed N (1)]
# bursts: the sends in groups of 6 a minute apart (simulated), an hour between groups, as a news
# app's breaking stories come: past Apple's background budget within a group.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

devices=2000
notifications=24
time_scale=600
strategies="silent alert auto"
schedule=hourly
seed=1
# Shares per condition (docs/devices.md): most phones in the background, some force-quit,
# offline for a while, dozing or in Low Power Mode, a few in the foreground.
population="foreground=10,background=35,suspended=15,force-quit=10,offline=10,doze=15,low-power=5"
usage="usage: scripts/bench-reach.sh [--devices N] [--notifications K] [--time-scale S] [--strategies \"silent alert auto\"] [--schedule hourly|bursts] [--population P] [--seed N]"
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices=$2; shift 2 ;;
        --notifications) notifications=$2; shift 2 ;;
        --time-scale) time_scale=$2; shift 2 ;;
        --strategies) strategies=$2; shift 2 ;;
        --schedule) schedule=$2; shift 2 ;;
        --population) population=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        *) echo "unknown option $1 ($usage)" >&2; exit 2 ;;
    esac
done
for value in "$devices" "$notifications" "$time_scale" "$seed"; do
    [[ "$value" =~ ^[0-9]+$ ]] && [ "$value" -gt 0 ] || { echo "error: counts and the time scale are positive integers ($usage)" >&2; exit 2; }
done
for strategy in $strategies; do
    case "$strategy" in silent | alert | auto) ;; *) echo "error: a strategy is silent, alert or auto, got '$strategy'" >&2; exit 2 ;; esac
done
case "$schedule" in hourly | bursts) ;; *) echo "error: --schedule is hourly or bursts, got '$schedule'" >&2; exit 2 ;; esac

# Stopped by a signal, the pipeline's EXIT trap still stops what it started.
trap 'exit 130' INT
trap 'exit 143' TERM
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3
ensure_swift
private_tmp bench
richpush_binary
# The wait after each send, in real seconds, and how long offline devices stay away (a quarter
# of the run, simulated): an hour of simulated time between sends (hourly); or groups of 6 sends
# a minute apart with an hour after each group (bursts: past Apple's budget of 3 within a group,
# refilled between groups). A burst reaches each device as a burst only if the fleet's fan-out of
# one send takes well under a simulated minute: run bursts with fewer devices or a lower
# --time-scale (e.g. --devices 2000 --time-scale 60).
read -r offline_for waits_text <<<"$(python3 - "$schedule" "$notifications" "$time_scale" <<'PY'
import sys
schedule, count, scale = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
if schedule == "hourly":
    waits = [3600] * count
else:
    waits = [3600 if k % 6 == 5 or k == count - 1 else 60 for k in range(count)]
print(int(sum(waits) / 4), ",".join(f"{w / scale:.4f}" for w in waits))
PY
)"
IFS=, read -r -a waits <<<"$waits_text"
summaries=()
workdirs=()
for strategy in $strategies; do
    work=$(mktemp -d "$TMPDIR/reach-$strategy-XXXX")
    workdirs+=("$work")
    echo "==> $strategy: $devices devices (iPhones and Android phones, $population), $notifications sends ($schedule, simulated, ${time_scale}x)"
    pipeline_device_args=(--platform mixed --population "$population" --seed "$seed" --time-scale "$time_scale" --offline-for "$offline_for")
    # The workers' estimate of Apple's budget, in the devices' simulated time (3 an hour).
    pipeline_worker_args=(--auto-budget-per-hour "$((3 * time_scale))")
    start_pipeline "$work" "$devices" "reach-$strategy" --quota-registrations 0 --quota-tags 0
    grep -q listening "$work/device.err" || { echo "error: device-sim did not start: $(cat "$work/device.err")" >&2; exit 1; }
    : >"$work/sends.jsonl"
    for k in $(seq 1 "$notifications"); do
        created=$(curl -sf -u bench:bench-password -H 'Content-Type: application/json' \
            -d "{\"message\":\"news $k\",\"richType\":\"text\",\"payload\":\"story $k\",\"delivery\":\"$strategy\"}" "$base/api/notifications")
        python3 -c 'import json,sys,time; print(json.dumps({"id": json.loads(sys.argv[1])["id"], "at": time.time()}))' "$created" >>"$work/sends.jsonl"
        sleep "${waits[$((k - 1))]}"
    done
    # The rest of the day: until the devices have been quiet for 10 s (at most 5 minutes).
    python3 - "$work/device.log" <<'PY'
import os, sys, time
path, quiet, deadline = sys.argv[1], 10, time.time() + 300
size, since = -1, time.time()
while time.time() < deadline:
    now = os.path.getsize(path)
    if now != size:
        size, since = now, time.time()
    elif time.time() - since >= quiet:
        break
    time.sleep(1)
PY
    # What the hub sent (sent, held, failed … per notification), for the pushes each strategy spent.
    python3 - "$base" "$work/sends.jsonl" >"$work/statuses.jsonl" <<'PY'
import base64, json, sys, urllib.request
base, sends = sys.argv[1], sys.argv[2]
auth = "Basic " + base64.b64encode(b"bench:bench-password").decode()
for line in open(sends):
    rich_id = json.loads(line)["id"]
    request = urllib.request.Request(f"{base}/api/notifications/{rich_id}/status", headers={"Authorization": auth})
    status = json.load(urllib.request.urlopen(request, timeout=60))
    print(json.dumps({"id": rich_id, "counts": status["counts"]}))
PY
    summary=$(python3 scripts/reach/report.py "$strategy" "$work" "$devices" "$time_scale" | tee "$work/report.txt" | tail -1)
    sed '$d' "$work/report.txt"
    summaries+=("$summary")
    stop_pipeline
    trap - EXIT
done
echo "==> per strategy (pairs shown with their content within the day; figures from one run):"
for line in "${summaries[@]}"; do echo "$line"; done
python3 scripts/reach/chart.py "$TMPDIR/reach-report.html" "${workdirs[@]}"
