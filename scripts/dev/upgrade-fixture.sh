#!/usr/bin/env bash
# Writes Tests/EndToEndTests/Fixtures/before-apps.keys.json: a Redis filled by a richpush built before
# apps existed (give its binary), for UpgradeTests. Not part of the tests: run it again only to
# make the fixture from another release.
#
# What it holds (prefix `richpush`, one partition, one Redis):
#   users alice (user, password alice-pw) and root (admin, root-pw), bcrypt cost 4;
#   an API key of root's with scope admin (its token in before-apps.token);
#   devices phone-1 (alice's, tag news) and phone-2 (root's, tag news), APNs;
#   a webhook of root's for all users' `sent` events;
#   notification A by alice to her own devices, queued (no worker ran);
#   notification B by root to `news`, scheduled a minute after it was made (due long before the
#   test runs).
# Usage: scripts/dev/upgrade-fixture.sh OLD_RICHPUSH_BINARY
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib/common.sh

old=${1:?usage: scripts/dev/upgrade-fixture.sh OLD_RICHPUSH_BINARY}
ensure_apt_packages redis-server redis-tools curl
private_tmp upgrade-fixture
dir=$(mktemp -d "$TMPDIR/fixture-XXXX")
api_pid=""
cleanup() {
    [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null || true
    kill_private_redis "$dir"
    rm -rf "$dir"
}
trap cleanup EXIT

redis_port=$(free_port)
api_port=$(free_port)
start_private_redis "$dir" "$redis_port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$redis_port/0"
echo alice-pw | "$old" users add alice --cost 4 >/dev/null
echo root-pw | "$old" users add root --role admin --cost 4 >/dev/null
token=$("$old" keys create root --scope admin --label upgrade | grep -o 'rpk_[A-Za-z0-9_-]*' | head -1)
[ -n "$token" ] || { echo "error: no API key token in the output of keys create" >&2; exit 1; }

"$old" api --port "$api_port" --webhook-allow-private --log-level warning 2>"$dir/api.log" &
api_pid=$!
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

put() { curl -sf -u "$1" -X PUT -H 'Content-Type: application/json' -d "$3" "$base/api/register/$2" >/dev/null; }
put alice:alice-pw phone-1 '{"Platform": "apns", "Handle": "token-phone-1", "Tags": ["news"]}'
put root:root-pw phone-2 '{"Platform": "apns", "Handle": "token-phone-2", "Tags": ["news"]}'
curl -sf -u root:root-pw -H 'Content-Type: application/json' \
    -d '{"url": "http://127.0.0.1:9/hook", "events": ["sent"], "allUsers": true, "secret": "upgrade-secret-0123456789"}' "$base/api/webhooks" >/dev/null
curl -sf -u alice:alice-pw -H 'Content-Type: application/json' \
    -d '{"message": "A", "richType": "text", "payload": "queued before the upgrade"}' "$base/api/notifications" >"$dir/a.json"
send_at=$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)
curl -sf -u root:root-pw -H 'Content-Type: application/json' \
    -d "{\"message\": \"B\", \"richType\": \"text\", \"payload\": \"scheduled before the upgrade\", \"target\": \"news\", \"sendAt\": \"$send_at\"}" \
    "$base/api/notifications" >"$dir/b.json"
kill "$api_pid"
wait "$api_pid" 2>/dev/null || true
api_pid=""

# Each key's DUMP with its time to live as it is now, not a dump.rdb: an RDB keeps absolute expiry
# times, so a test loading it after they pass finds the expiring keys gone.
mkdir -p Tests/EndToEndTests/Fixtures
python3 scripts/dev/redis_keys.py "$redis_port" > Tests/EndToEndTests/Fixtures/before-apps.keys.json
printf '%s\n' "$token" > Tests/EndToEndTests/Fixtures/before-apps.token
python3 - "$dir/a.json" "$dir/b.json" > Tests/EndToEndTests/Fixtures/before-apps.json <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(json.dumps({"queued": a["id"], "scheduled": b["id"]}))
PY
echo "wrote Tests/EndToEndTests/Fixtures/before-apps.{keys.json,token,json} ($(redis-cli -p "$redis_port" DBSIZE) keys)"
