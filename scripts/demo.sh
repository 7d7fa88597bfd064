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
# --nh: the tutorial's own topology, RichPush as its notification hub. scripts/nh/backend.py plays the
# tutorial's ASP.NET AppBackend (Python, stdlib only): the devices register with it and fetch from it
# (Basic auth, user name == password, as in the tutorial), and it reaches RichPush only through Azure
# Notification Hubs' REST interface (`richpush api --nh-port`, TLS with a certificate made for the
# run, which the backend verifies) with the connection string `richpush apps connection-string`
# prints for hub `default`: Atom XML registrations tagged username:demo, and the tutorial's silent
# push as an Apple native send (for now without its "sound": "", see below). The workers send
# through the local APNs (apns-sim, as with --adapter apns), which passes the pushes on to the two
# iPhones; the demo presses the app's "Send push" (POST /api/notifications to the backend) and
# checks the devices, what apns-sim got (the backend's payload, byte for byte) and NH's outcome of
# the send. Always on a private redis-server.
# It builds the binary unless RICHPUSH_BIN names one to run (then nothing is built, nor Swift needed,
# and --release changes nothing): RICHPUSH_BIN=/path/to/richpush scripts/demo.sh --nh.
# Usage: scripts/demo.sh [--adapter simulated|apns|native|webpush | --nh] [--release]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

adapter=simulated
adapter_given=0
nh=0
configuration=debug
usage="usage: scripts/demo.sh [--adapter simulated|apns|native|webpush | --nh] [--release]"
while [ $# -gt 0 ]; do
    case "$1" in
        --adapter) [ $# -ge 2 ] || { echo "--adapter needs a value" >&2; exit 2; }; adapter=$2; adapter_given=1; shift 2 ;;
        --nh) nh=1; shift ;;
        --release) configuration=release; shift ;;
        *) echo "unknown option $1 ($usage)" >&2; exit 2 ;;
    esac
done
case "$adapter" in simulated|apns|native|webpush) ;; *) echo "--adapter must be simulated, apns, native (apns for iOS, fcm for Android, webpush for a browser) or webpush" >&2; exit 2 ;; esac
if [ "$nh" = 1 ]; then
    # The hub's pushes reach the iPhones through the local APNs.
    [ "$adapter_given" = 0 ] || [ "$adapter" = apns ] || { echo "--nh sends through the local APNs: no --adapter $adapter ($usage)" >&2; exit 2; }
    adapter=apns
fi
# How many devices run, and how many of them are browsers.
devices=$([ "$adapter" = native ] && echo 3 || echo 2)
browsers=$(case "$adapter" in native) echo 1 ;; webpush) echo 2 ;; *) echo 0 ;; esac)

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl python3 openssl
[ -n "${RICHPUSH_BIN:-}" ] || ensure_swift
export TMPDIR="$PWD/.tmp/demo"
mkdir -p "$TMPDIR"
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work"
}
trap cleanup EXIT

if [ -n "${RICHPUSH_BIN:-}" ]; then
    richpush_binary
    echo "==> using $bin (RICHPUSH_BIN: nothing built)"
else
    echo "==> building ($configuration; the first build takes several minutes)"
    swift build -c "$configuration" --product richpush 2>&1 | grep -E "error|Compiling RichPush|Build complete" || true
    bin="$(swift build -c "$configuration" --show-bin-path)/richpush"
    [ -x "$bin" ] || { echo "build failed" >&2; exit 1; }
fi

# --nh gives the default app NH rules and a key-encryption key: never on a Redis of yours.
if [ "$nh" = 1 ] && [ -n "${REDIS_URL:-}" ]; then echo "==> --nh runs on a private redis-server of its own: REDIS_URL is not used"; fi
if [ -n "${REDIS_URL:-}" ] && [ "$nh" = 0 ]; then
    export RICHPUSH_REDIS_URL="$REDIS_URL"
    prefix="demo-$$"
else
    port=$(free_port)
    start_private_redis "$work/redis" "$port"
    export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
    prefix="richpush"
fi
echo "==> Redis at ${RICHPUSH_REDIS_URL%%@*}"

api_options=()
if [ "$nh" = 1 ]; then
    # The tutorial's check: the user name is the password. RichPush has no user demo here: the
    # devices talk to the backend alone, and the backend to RichPush through its NH interface.
    password=demo
    # The hub is the default app: its NH rules (sealed with a key-encryption key made for the run)
    # and a TLS certificate for the listener, which the backend verifies.
    "$bin" apps new-kek >"$work/kek"
    "$bin" apps nh-rules default --defaults --kek-file "$work/kek" >/dev/null
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/nh-key.pem" -out "$work/nh-cert.pem" \
        -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
    nh_port=$(free_port)
    api_options=(--nh-port "$nh_port" --nh-tls-cert-file "$work/nh-cert.pem" --nh-tls-key-file "$work/nh-key.pem" --kek-file "$work/kek")
    connection=$("$bin" apps connection-string default --endpoint "sb://127.0.0.1:$nh_port/" --kek-file "$work/kek")
else
    password=$(head -c 12 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
    echo "$password" | "$bin" users add demo --queue-prefix "$prefix" --cost 10 >/dev/null
fi
api_port=$(free_port)
"$bin" api --port "$api_port" --queue-prefix "$prefix" --log-level warning "${api_options[@]}" 2>"$work/api.log" & pids+=($!)
worker_options=()
device_options=()
if [ "$adapter" = apns ] || [ "$adapter" = native ]; then
    # A signing key like the .p8 Apple's portal gives (P-256, PKCS#8), made for this run only.
    openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
    openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
    apns_port=$(free_port)
    "$bin" apns-sim --port "$apns_port" --team-id DEMOTEAM01 --key-id DEMOKEY001 --key-file "$work/AuthKey.p8" \
        --topic com.example.richpush --cert-dir "$work/apns" --hub-prefix "$prefix" --log-requests $([ "$nh" = 1 ] && echo --log-payloads) \
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

image=Sources/RichPushAPI/Resources/default-image.png
device_api=$base
if [ "$nh" = 1 ]; then
    echo "==> NH listener on https://127.0.0.1:$nh_port (certificate $work/nh-cert.pem); hub default: $(echo "$connection" | sed 's/SharedAccessKey=.*/SharedAccessKey=***/')"
    # The tutorial's AppBackend: the devices' API; the hub reached through NH's REST interface alone.
    backend_port=$(free_port)
    # The connection string goes in the backend's environment, not on a command line `ps` shows.
    backend=(python3 scripts/nh/backend.py --hub default --ca-file "$work/nh-cert.pem")
    # The backend leaves the tutorial's empty "sound": "" out of its silent push: Apple asks a
    # background push to carry nothing to show, RichPush's APNs adapter refuses one that does, and
    # the NH listener answers such a send 400 (docs/nh.md, "The tutorial against RichPush").
    NH_CONNECTION_STRING=$connection "${backend[@]}" serve --port "$backend_port" --image "$image" --no-sound-key >"$work/backend.log" 2>"$work/backend.err" & pids+=($!)
    for _ in $(seq 1 100); do grep -q listening "$work/backend.err" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/backend.err" || { echo "the backend did not start:" >&2; cat "$work/backend.err" >&2; exit 1; }
    device_api="http://127.0.0.1:$backend_port"
    echo "==> the tutorial's AppBackend (scripts/nh/backend.py) on $device_api: Basic auth, user name == password; RichPush as its notification hub"
fi

RICHPUSH_PASSWORD="$password" "$bin" device-sim --api "$device_api" --user demo --devices "$devices" --app-state mixed --tap more \
    --fire-delay 5 --count "$devices" --out "$work/device" --hub-prefix "$prefix" --handle-prefix "demo-phone" "${device_options[@]}" \
    >"$work/device.log" 2>"$work/device.err" & sim=$!
pids+=($sim)
for _ in $(seq 1 100); do grep -q listening "$work/device.err" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$work/device.err" || { echo "the device simulator did not start:" >&2; cat "$work/device.err" >&2; exit 1; }
if [ "$nh" = 1 ]; then
    echo "==> 2 simulated iPhones of user demo registered with the backend, which registered them at the hub (Atom XML, tag username:demo), and listening (device 0 in the foreground, device 1 in the background):"
    grep '"event":"registered"' "$work/backend.log" | sed 's/^/    /'
elif [ "$adapter" = native ]; then
    echo "==> 3 simulated devices of user demo registered and listening (device 0 an iPhone in the foreground, device 1 an Android phone in the background, device 2 a browser with the page open)"
elif [ "$adapter" = webpush ]; then
    echo "==> 2 simulated browsers of user demo subscribed, registered and listening (device 0 with the page open, device 1 in the background)"
else
    echo "==> 2 simulated devices of user demo registered and listening (device 0 in the foreground, device 1 in the background)"
fi

if [ "$nh" = 1 ]; then
    # The app's "Send push" button: the backend stores the rich notification (its image) and sends
    # the silent push to username:demo through the hub.
    echo "==> pressing \"Send push\": curl -u demo:demo -X POST $device_api/api/notifications"
    accepted=$(curl -sf -u "demo:$password" -X POST "$device_api/api/notifications") \
        || { echo "the backend refused the send; see $work/backend.log" >&2; exit 1; }
else
    echo "==> sending a rich push: curl -u demo:*** -F message='Check this image out!' -F image=@$image $base/api/notifications"
    accepted=$(curl -sf -u "demo:$password" -F "message=Check this image out!" -F "image=@$image" "$base/api/notifications")
fi
echo "    $accepted"
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$accepted")

echo "==> what the devices did (the local notification fires 5 s after the fetch, as in the tutorial):"
for _ in $(seq 1 300); do kill -0 "$sim" 2>/dev/null || break; sleep 0.1; done
sed 's/^/    /' "$work/device.log"

ok=1
if [ "$nh" = 1 ]; then
    echo "==> what the backend did (one JSON line per event):"
    sed 's/^/    /' "$work/backend.log"
    # NH's outcome of the send (GET {hub}/messages/{id}, with the backend's connection string).
    hub_id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["hubNotification"])' "$accepted")
    outcome=$(NH_CONNECTION_STRING=$connection "${backend[@]}" outcome "$hub_id" --wait 30) || true
    echo "==> NH's outcome of send $hub_id: $outcome"
    python3 -c 'import json,sys; o=json.loads(sys.argv[1] or "{}"); sys.exit(o.pop("state",None)!="Completed" or o.pop("ApnsOutcomeCounts",None)!={"Success":int(sys.argv[2])} or any(o.values()))' "$outcome" "$devices" \
        || { echo "expected the send Completed with Success $devices under APNs (and nothing else)" >&2; ok=0; }
    fetched=$(grep -c '"event":"fetched"' "$work/backend.log" || true)
    [ "$fetched" -eq "$devices" ] || { echo "expected $devices fetches from the backend, saw $fetched" >&2; ok=0; }
    receipts=$(grep '"event":"receipt"' "$work/backend.log" | grep -c '"kind":"opened"' || true)
    [ "$receipts" -eq "$devices" ] || { echo "expected $devices 'opened' receipts at the backend, saw $receipts" >&2; ok=0; }
else
    status=$(curl -sf -u "demo:$password" "$base/api/notifications/$id/status")
    state=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["state"])' "$status")
    echo "==> final status of notification $id: $status"
    [ "$state" = opened ] || { echo "expected state 'opened', got '$state'" >&2; ok=0; }
fi
opened=$(grep -c ' opened ' "$work/device.log" || true)
[ "$opened" -eq "$devices" ] || { echo "expected all $devices devices to open the image, saw $opened" >&2; ok=0; }
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
if [ "$nh" = 1 ]; then
    # What reached "Apple" is what the backend sent, byte for byte, to both iPhones, as a background push.
    python3 - "$work/backend.log" "$work/apns-sim.log" <<'PY' || { echo "DEMO FAILED; logs in $work" >&2; exit 1; }
import json, sys
sent = [json.loads(line) for line in open(sys.argv[1]) if '"event":"sent"' in line]
got = [json.loads(line) for line in open(sys.argv[2]) if line.startswith("{")]
payload = sent[0]["payload"] if sent else None
wrong = [g for g in got if g.get("payload") != payload or g.get("status") != 200 or g.get("pushType") != "background"]
if len(sent) != 1 or len(got) != 2 or wrong or len({g.get("device") for g in got}) != 2:
    print(f"apns-sim got {got}; the backend sent {payload}", file=sys.stderr)
    sys.exit(1)
print(f"==> apns-sim got the backend's silent push as written, a background push to each iPhone: {payload}")
PY
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
if [ "$nh" = 1 ]; then
    echo "==> the rich push went all the way (the tutorial's backend, RichPush as its notification hub, through apns-sim): sent, received, fetched from the backend, displayed, opened with More"
    exit 0
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
