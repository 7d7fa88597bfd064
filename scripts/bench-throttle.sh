#!/usr/bin/env bash
# Benchmark (not a test): a throttled fan-out. One notification to D simulated devices with
# throttlePerMinute R, through the API, two workers and one device-sim process on a private
# redis-server; reports, from the devices' "fetched" events, how long the fan-out took against
# D/R minutes and the most background fetches in any 1 s, 10 s and 60 s against the limit (the
# limit is per minute: a gate holds each notification to it over any 60 s; shorter windows show
# how smooth the spread is).
# Usage: scripts/bench-throttle.sh [--devices D (600)] [--per-minute R (1200)]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

devices=600
per_minute=1200
while [ $# -gt 0 ]; do
    case "$1" in
        --devices) devices=$2; shift 2 ;;
        --per-minute) per_minute=$2; shift 2 ;;
        *) echo "unknown option $1 (usage: scripts/bench-throttle.sh [--devices D] [--per-minute R])" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3
ensure_swift
private_tmp bench
richpush_binary
work=$(mktemp -d "$TMPDIR/throttle-XXXX")
start_pipeline "$work" "$devices" throttle-phone --quota-registrations 0 --quota-tags 0

curl -sf -u bench:bench-password -H 'Content-Type: application/json' \
    -d "{\"message\":\"throttled\",\"richType\":\"text\",\"payload\":\"p\",\"throttlePerMinute\":$per_minute}" "$base/api/notifications" >"$work/created.json"

python3 - "$work" "$devices" "$per_minute" <<'PY'
import json, sys, time
work, devices, per_minute = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rich_id = json.load(open(f"{work}/created.json"))["id"]
expected = devices / per_minute * 60
deadline = time.time() + expected * 2 + 60
while True:
    fetched = {}
    for line in open(f"{work}/device.log"):
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") == "fetched" and event.get("richId") == rich_id:
            fetched.setdefault(event["installation"], event["at"] / 1e6)
    if len(fetched) >= devices or time.time() > deadline:
        break
    time.sleep(1)
times = sorted(fetched.values())
def most_within(seconds):
    best, start = 0, 0
    for end in range(len(times)):
        while times[end] - times[start] >= seconds:
            start += 1
        best = max(best, end - start + 1)
    return best
span = times[-1] - times[0] if times else 0
limit = per_minute / 60
print(f"{len(fetched)} of {devices} devices fetched over {span:.1f} s (D/R = {expected:.1f} s); "
      f"average {len(times) / max(span, 1e-9):.1f} fetches/s against a limit of {limit:.1f}/s")
print(f"most fetches in any 1 s: {most_within(1)} (limit {limit:.0f}); in any 10 s: {most_within(10)} (limit {limit * 10:.0f}); "
      f"in any 60 s: {most_within(60)} (limit {per_minute})")
sys.exit(0 if len(fetched) == devices else 1)
PY
