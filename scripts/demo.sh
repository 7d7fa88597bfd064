#!/usr/bin/env bash
# The whole pipeline end to end on this machine: installs what is missing, builds, starts
# a private redis-server (or uses REDIS_URL), the API, two workers and a device simulator with two
# devices (one app in the foreground, one in the background), sends a rich push with an image,
# and shows the devices receive it, fetch the image, display the local notification and open it
# with "More". Exits 0 only if the push went all the way through; stops everything it started.
# --adapter apns sends through the APNs adapter instead: a local APNs (`richpush apns-sim`, TLS and
# HTTP/2, with a signing key made for the run) passes the pushes on to the devices.
# --adapter native: device 0 is an iPhone reached through apns-sim, device 1 an Android phone reached
# through a local FCM (`richpush fcm-sim`, with a service account made for the run); the workers run
# with --adapter apns,fcm,webpush and device 2 is a browser (below).
# --adapter webpush: two web devices (a browser's service worker each) subscribe at a local push
# service (`richpush webpush-sim`, TLS, checking RFC 8030/8291/8292), restricted to a VAPID key made
# for the run; the workers encrypt to each subscription and sign with that key, and each device
# decrypts with its own keys before it fetches.
# It builds the debug binary, the build scripts/test.sh then extends with the tests instead of
# making a second, optimized one (a newcomer runs both); --release builds and runs the release
# binary, as the benchmarks and a deployment do.
# With the simulated hub (the default), the demo then shows `delivery: auto` choose per device:
# two more iPhones, one in the background and one the user force-quit, get two auto pushes; the
# background one takes both silent, the force-quit one drops the first (iOS does not wake it) and
# gets the second as an alert whose notification service extension attaches the image through
# the signed media URL; each device's status entry says which form it got and why.
# Usage: scripts/demo.sh [--adapter simulated|apns|native|webpush] [--release]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

adapter=simulated
configuration=debug
while [ $# -gt 0 ]; do
    case "$1" in
        --adapter) [ $# -ge 2 ] || { echo "--adapter needs a value" >&2; exit 2; }; adapter=$2; shift 2 ;;
        --release) configuration=release; shift ;;
        *) echo "unknown option $1 (usage: scripts/demo.sh [--adapter simulated|apns|native|webpush] [--release])" >&2; exit 2 ;;
    esac
done
case "$adapter" in simulated|apns|native|webpush) ;; *) echo "--adapter must be simulated, apns, native (apns for iOS, fcm for Android, webpush for a browser) or webpush" >&2; exit 2 ;; esac
# How many devices run, and how many of them are browsers.
devices=$([ "$adapter" = native ] && echo 3 || echo 2)
browsers=$(case "$adapter" in native) echo 1 ;; webpush) echo 2 ;; *) echo 0 ;; esac)

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3 openssl
ensure_swift
export TMPDIR="$PWD/.tmp/demo"
mkdir -p "$TMPDIR"
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work"
}
trap cleanup EXIT

echo "==> building ($configuration; the first build takes several minutes)"
swift build -c "$configuration" --product richpush 2>&1 | grep -E "error|Compiling RichPush|Build complete" || true
bin="$(swift build -c "$configuration" --show-bin-path)/richpush"
[ -x "$bin" ] || { echo "build failed" >&2; exit 1; }

if [ -n "${REDIS_URL:-}" ]; then
    export RICHPUSH_REDIS_URL="$REDIS_URL"
    prefix="demo-$$"
else
    port=$(free_port)
    start_private_redis "$work/redis" "$port"
    export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
    prefix="richpush"
fi
echo "==> Redis at ${RICHPUSH_REDIS_URL%%@*}"

password=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
echo "$password" | "$bin" users add demo --queue-prefix "$prefix" --cost 10 >/dev/null
api_port=$(free_port)
"$bin" api --port "$api_port" --queue-prefix "$prefix" --log-level warning 2>"$work/api.log" & pids+=($!)
worker_options=()
device_options=()
if [ "$adapter" = apns ] || [ "$adapter" = native ]; then
    # A signing key like the .p8 Apple's portal gives (P-256, PKCS#8), made for this run only.
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
    apns_port=$(free_port)
    "$bin" apns-sim --port "$apns_port" --team-id DEMOTEAM01 --key-id DEMOKEY001 --key-file "$work/AuthKey.p8" \
        --topic com.example.richpush --cert-dir "$work/apns" --hub-prefix "$prefix" --log-requests \
        >"$work/apns-sim.log" 2>"$work/apns-sim.err" & pids+=($!)
    for _ in $(seq 1 100); do grep -q listening "$work/apns-sim.err" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/apns-sim.err" || { echo "apns-sim did not start:" >&2; cat "$work/apns-sim.err" >&2; exit 1; }
    echo "==> local APNs (richpush apns-sim) on https://127.0.0.1:$apns_port, HTTP/2 over TLS; workers trust $work/apns/ca.pem"
    worker_options=(--adapter "$([ "$adapter" = native ] && echo apns,fcm,webpush || echo apns)" --apns-url "https://127.0.0.1:$apns_port" --apns-sandbox-url "https://127.0.0.1:$apns_port" --apns-topic com.example.richpush
                    --apns-key-file "$work/AuthKey.p8" --apns-key-id DEMOKEY001 --apns-team-id DEMOTEAM01 --apns-ca-file "$work/apns/ca.pem")
    device_options=(--apns-tokens)
fi
if [ "$adapter" = native ]; then
    # A service account like the Firebase console's (an RSA key), made by fcm-sim for this run only.
    fcm_port=$(free_port)
    "$bin" fcm-sim --port "$fcm_port" --service-account "$work/fcm/service-account.json" --make-credentials \
        --cert-dir "$work/fcm" --hub-prefix "$prefix" --log-requests >"$work/fcm-sim.log" 2>"$work/fcm-sim.err" & pids+=($!)
    for _ in $(seq 1 100); do grep -q listening "$work/fcm-sim.err" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/fcm-sim.err" || { echo "fcm-sim did not start:" >&2; cat "$work/fcm-sim.err" >&2; exit 1; }
    echo "==> local FCM (richpush fcm-sim) on https://127.0.0.1:$fcm_port, HTTP/2 over TLS: OAuth2 token endpoint and messages:send"
    worker_options+=(--fcm-credentials "$work/fcm/service-account.json" --fcm-url "https://127.0.0.1:$fcm_port" --fcm-ca-file "$work/fcm/ca.pem")
    device_options+=(--platform all)
fi
if [ "$browsers" -gt 0 ]; then
    # A VAPID key pair as web-push libraries make one (P-256), for this run only: the workers sign
    # with the private key; the browsers restrict their subscriptions to the public one (the
    # applicationServerKey of PushManager.subscribe, the last 65 bytes of its DER form).
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/vapid-ec.pem" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$work/vapid-ec.pem" -out "$work/vapid.pem"
    server_key=$(openssl ec -in "$work/vapid-ec.pem" -pubout -outform DER 2>/dev/null | tail -c 65 | base64 -w0 | tr '+/' '-_' | tr -d '=')
    webpush_port=$(free_port)
    "$bin" webpush-sim --port "$webpush_port" --cert-dir "$work/webpush" --log-requests >"$work/webpush-sim.log" 2>"$work/webpush-sim.err" & pids+=($!)
    for _ in $(seq 1 100); do grep -q listening "$work/webpush-sim.err" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/webpush-sim.err" || { echo "webpush-sim did not start:" >&2; cat "$work/webpush-sim.err" >&2; exit 1; }
    echo "==> local push service (richpush webpush-sim) on https://127.0.0.1:$webpush_port: RFC 8030 pushes, VAPID and aes128gcm checked"
    [ "$adapter" = webpush ] && worker_options=(--adapter webpush)
    worker_options+=(--webpush-vapid-key-file "$work/vapid.pem" --webpush-subject mailto:demo@example.com --webpush-ca-file "$work/webpush/ca.pem")
    [ "$adapter" = webpush ] && device_options+=(--platform webpush)
    device_options+=(--webpush-url "https://127.0.0.1:$webpush_port" --webpush-ca-file "$work/webpush/ca.pem" --webpush-application-server-key "$server_key")
fi
base="http://127.0.0.1:$api_port"
# The API's address, for the media URLs the workers sign into alerts.
worker_options+=(--api-base-url "$base")
for i in 1 2; do
    "$bin" worker --queue-prefix "$prefix" --consumer "demo-worker-$i" --log-level warning "${worker_options[@]}" 2>"$work/worker-$i.log" & pids+=($!)
done
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { echo "the API did not start; see $work/api.log" >&2; exit 1; }
echo "==> API on $base, 2 workers"

RICHPUSH_PASSWORD="$password" "$bin" device-sim --api "$base" --user demo --devices "$devices" --app-state mixed --tap more \
    --fire-delay 5 --count "$devices" --out "$work/device" --hub-prefix "$prefix" --handle-prefix "demo-phone" "${device_options[@]}" \
    >"$work/device.log" 2>"$work/device.err" & sim=$!
pids+=($sim)
for _ in $(seq 1 100); do grep -q listening "$work/device.err" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/device.err" || { echo "the device simulator did not start:" >&2; cat "$work/device.err" >&2; exit 1; }
if [ "$adapter" = native ]; then
    echo "==> 3 simulated devices of user demo registered and listening (device 0 an iPhone in the foreground, device 1 an Android phone in the background, device 2 a browser with the page open)"
elif [ "$adapter" = webpush ]; then
    echo "==> 2 simulated browsers of user demo subscribed, registered and listening (device 0 with the page open, device 1 in the background)"
else
    echo "==> 2 simulated devices of user demo registered and listening (device 0 in the foreground, device 1 in the background)"
fi

image=Sources/RichPushAPI/Resources/default-image.png
echo "==> sending a rich push: curl -u demo:*** -F message='Check this image out!' -F image=@$image $base/api/notifications"
accepted=$(curl -sf -u "demo:$password" -F "message=Check this image out!" -F "image=@$image" "$base/api/notifications")
echo "    $accepted"
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$accepted")

echo "==> what the devices did (the local notification fires 5 s after the fetch, as in the tutorial):"
for _ in $(seq 1 300); do kill -0 "$sim" 2>/dev/null || break; sleep 0.1; done
sed 's/^/    /' "$work/device.log"

status=$(curl -sf -u "demo:$password" "$base/api/notifications/$id/status")
state=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["state"])' "$status")
echo "==> final status of notification $id: $status"
ok=1
opened=$(grep -c ' opened ' "$work/device.log" || true)
[ "$opened" -eq "$devices" ] || { echo "expected all $devices devices to open the image, saw $opened" >&2; ok=0; }
[ "$state" = opened ] || { echo "expected state 'opened', got '$state'" >&2; ok=0; }
for file in "$work"/device/richpush-"$id"-device*.png; do
    if cmp -s "$file" "$image"; then echo "==> image view saved $file (identical to the image sent)"; else echo "missing or different: $file" >&2; ok=0; fi
done
[ "$ok" -eq 1 ] || { echo "DEMO FAILED; logs in $work" >&2; exit 1; }
if [ "$adapter" = apns ] || [ "$adapter" = native ]; then
    echo "==> what the local APNs received (one JSON line per request):"
    sed 's/^/    /' "$work/apns-sim.log"
    expected=$([ "$adapter" = native ] && echo 1 || echo 2)
    accepted=$(grep -c '"status":200' "$work/apns-sim.log" || true)
    [ "$accepted" -eq "$expected" ] || { echo "expected apns-sim to accept $expected push(es), it accepted $accepted" >&2; exit 1; }
fi
if [ "$adapter" = native ]; then
    echo "==> what the local FCM received (one JSON line per request; the first is the token exchange):"
    sed 's/^/    /' "$work/fcm-sim.log"
    accepted=$(grep '"status":200' "$work/fcm-sim.log" | grep -vc '"issued"' || true)
    [ "$accepted" -eq 1 ] || { echo "expected fcm-sim to accept 1 message, it accepted $accepted" >&2; exit 1; }
fi
if [ "$browsers" -gt 0 ]; then
    echo "==> what the local push service did (one JSON line per request and delivery):"
    sed 's/^/    /' "$work/webpush-sim.log"
    accepted=$(grep '"event":"push"' "$work/webpush-sim.log" | grep -c '"status":201' || true)
    [ "$accepted" -eq "$browsers" ] || { echo "expected webpush-sim to accept $browsers push(es), it accepted $accepted" >&2; exit 1; }
fi
echo "==> the rich push went all the way ($adapter): sent, received, fetched, displayed, opened with More"

[ "$adapter" = simulated ] || exit 0
echo "==> delivery auto: two more iPhones of user demo, one in the background, one the user force-quit"
auto_pids=()
for state in background force-quit; do
    RICHPUSH_PASSWORD="$password" "$bin" device-sim --api "$base" --user demo --devices 1 --population "$state=1" --tap none \
        --hub-prefix "$prefix" --handle-prefix "demo-$state" --format json >"$work/auto-$state.log" 2>"$work/auto-$state.err" &
    auto_pids+=($!)
    pids+=($!)
done
for state in background force-quit; do
    for _ in $(seq 1 100); do grep -q listening "$work/auto-$state.err" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/auto-$state.err" || { echo "the $state iPhone did not start:" >&2; cat "$work/auto-$state.err" >&2; exit 1; }
done
# wait_for FILE PATTERN COUNT: until FILE has COUNT lines matching PATTERN (at most 60 s).
wait_for() {
    for _ in $(seq 1 600); do [ "$(grep -c "$2" "$1" || true)" -ge "$3" ] && return 0; sleep 0.1; done
    echo "DEMO FAILED: $1 has no $3 line(s) with $2; logs in $work" >&2
    exit 1
}
auto_ids=()
for k in 1 2; do
    echo "==> sending auto push $k: curl -u demo:*** -F delivery=auto -F message='Auto $k' -F image=@$image $base/api/notifications"
    accepted=$(curl -sf -u "demo:$password" -F delivery=auto -F "message=Auto $k" -F "image=@$image" "$base/api/notifications")
    auto_ids+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$accepted")")
    wait_for "$work/auto-background.log" '"event":"fetched"' "$k"
    if [ "$k" = 1 ]; then wait_for "$work/auto-force-quit.log" '"event":"dropped"' 1; else wait_for "$work/auto-force-quit.log" '"event":"banner"' 1; fi
done
for state in background force-quit; do
    echo "==> what the $state iPhone did:"
    sed 's/^/    /' "$work/auto-$state.log"
done
grep '"event":"banner"' "$work/auto-force-quit.log" | grep -q "with the attachment" \
    || { echo "DEMO FAILED: the force-quit iPhone's alert came without the image; logs in $work" >&2; exit 1; }
echo "==> how each device got auto push 2 (its status entry's strategy):"
curl -sf -u "demo:$password" "$base/api/notifications/${auto_ids[1]}/status" | python3 -c '
import json, sys
names = {}
for state in ("background", "force-quit"):
    for line in open(f"{sys.argv[1]}/auto-{state}.log"):
        if line.startswith("{") and json.loads(line).get("installation"):
            names[json.loads(line)["installation"]] = state
for device in json.load(sys.stdin)["devices"]:
    if "strategy" in device and device["installation"] in names:
        print("    the " + names[device["installation"]] + " iPhone: " + device["state"] + ", " + device["strategy"])' "$work"
for pid in "${auto_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
echo "==> auto went both ways: silent to the iPhone with budget, the alert with its image to the force-quit one"
