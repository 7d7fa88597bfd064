#!/usr/bin/env bash
# Benchmark (not a test): how late scheduled notifications fire. Creates N notifications through
# the API with sendAt spread over a window starting a little later, runs the API, two workers and
# one simulated device on a private redis-server, and reports, from the device's "received" events,
# the lateness (received - sendAt) p50/p99/max, and that none came early or twice or not at all.
# Usage: scripts/bench-schedule.sh [--notifications N (10000)] [--window SECONDS (30)] [--lead SECONDS (20)]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

notifications=10000
window=30
lead=20
while [ $# -gt 0 ]; do
    case "$1" in
        --notifications) notifications=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --lead) lead=$2; shift 2 ;;
        *) echo "unknown option $1 (usage: scripts/bench-schedule.sh [--notifications N] [--window S] [--lead S])" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3
ensure_swift
private_tmp bench
richpush_binary
work=$(mktemp -d "$TMPDIR/schedule-XXXX")
start_pipeline "$work" 1 bench-phone

python3 - "$base" "$notifications" "$window" "$lead" "$work" <<'PY'
import base64, http.client, json, sys, time, urllib.parse
base, count, window, lead, work = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port)
auth = "Basic " + base64.b64encode(b"bench:bench-password").decode()
start = time.time() * 1000 + lead * 1000
due = {}
created = time.time()
for i in range(count):
    send_at = int(start + window * 1000 * i / count)
    body = json.dumps({"message": f"s{i}", "richType": "text", "payload": "p", "sendAt": send_at})
    connection.request("POST", "/api/notifications", body, {"Authorization": auth, "Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    if response.status != 202:
        sys.exit(f"create {i}: HTTP {response.status} {answer[:200]}")
    due[json.loads(answer)["id"]] = send_at
took = time.time() - created
if time.time() * 1000 > start:
    sys.exit(f"creating {count} took {took:.1f} s, past the first sendAt: raise --lead")
print(f"created {count} scheduled notifications in {took:.1f} s; due over {window:.0f} s from {lead:.0f} s after the start")
json.dump(due, open(f"{work}/due.json", "w"))
PY

python3 - "$work" "$notifications" "$window" "$lead" <<'PY'
import json, sys, time
work, count, window, lead = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
due = json.load(open(f"{work}/due.json"))
deadline = max(due.values()) / 1000 + 30
received = {}
while time.time() < deadline:
    received = {}
    duplicates = 0
    for line in open(f"{work}/device.log"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "received" and event.get("richId") in due:
            if event["richId"] in received:
                duplicates += 1
            received[event["richId"]] = event["at"] / 1000
    if len(received) == len(due):
        break
    time.sleep(1)
late = sorted(received[i] - due[i] for i in received)
early = [x for x in late if x < 0]
def pct(p):
    return late[min(len(late) - 1, int(p * len(late)))]
print(f"received {len(received)} of {len(due)}; early {len(early)}; duplicated {duplicates}")
if late:
    print(f"lateness (received - sendAt): p50 {pct(0.50):.0f} ms, p99 {pct(0.99):.0f} ms, max {late[-1]:.0f} ms")
sys.exit(0 if len(received) == len(due) and not early and duplicates == 0 else 1)
PY
