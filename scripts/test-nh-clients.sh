#!/usr/bin/env bash
# Azure Notification Hubs' interface through two NH clients no one here wrote, from PyPI:
# notificationhubs-rest-python (Microsoft's sample: hub-scoped tokens, `messages/`, only 201 is a
# success) and azure-notification-hub-unofficial (a port of the official Node SDK:
# namespace-scoped tokens, `messages`). A private redis-server, an app `shop` with NH's two default
# rules (`richpush apps nh-rules --defaults`), `richpush api --nh-port` over TLS with a certificate
# made for the run; each client is given the connection string `richpush apps connection-string`
# prints. scripts/nh/clients.py sends through both: template, native (apple, fcmv1, browser),
# tagged, $UserId and broadcast sends, scheduled sends (both clients' time formats) and a cancel,
# an outcome document (GET messages/{id}); puts, reads, patches and deletes installations; and
# checks each refusal over the wire (a wrong key, a Listen rule sending, another hub, gcm, an
# apns-topic, NH's tag limits, a test send). Then this script checks what Redis holds: each
# accepted send a notification of the app, its creator the rule, its target the tags (`*` for a
# broadcast), its properties or native payload as sent, its state; the installation left, as patched.
# Last, hub news gets credentials for a local apns-sim, fcm-sim and webpush-sim, and a worker runs
# with all three adapters: scripts/nh/delivery.py registers iPhones through NH and checks, in
# apns-sim's request log, that a native push reached them as written and a template push only the
# one with a template, rendered as NH renders it; scripts/nh/delivery_more.py registers fcmv1, gcm
# and browser installations (the script plays the phones, listening on the simulated hub fcm-sim
# passes messages to, and the browsers, subscribed at webpush-sim with keys of their own) and
# checks fcmv1, browser and template sends as each device received them, and their outcome documents.
# Uses $RICHPUSH_BIN when set (scripts/test.sh passes the debug binary), else builds release.
# Files: ~/.cache/richpush/nh-venv (the clients, cryptography and websocket-client, installed once per machine), .tmp/nh/run-*.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools curl python3 openssl
ensure_swift
private_tmp nh
richpush_binary
venv="${RICHPUSH_NH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/richpush/nh-venv}"
# cryptography and websocket-client: scripts/nh/delivery_more.py plays browsers (P-256 keys, RFC 8291, a WebSocket).
ensure_venv "$venv" "notificationhubs-rest-python==1.0.3" "azure-notification-hub-unofficial==0.1.0" "cryptography==50.0.2" \
    "websocket-client==1.9.2"

work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    stop_pids "${pids[@]}"
    kill_private_redis "$work"
}
trap cleanup EXIT

port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
"$bin" apps new-kek >"$work/kek"
export RICHPUSH_KEK_FILE="$work/kek"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
    -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
"$bin" apps create shop >/dev/null
"$bin" apps create news >/dev/null
"$bin" apps nh-rules shop --defaults
"$bin" apps nh-rules news --defaults >/dev/null
api_port=$(free_port)
nh_port=$(free_port)
"$bin" api --port "$api_port" --nh-port "$nh_port" --nh-tls-cert-file "$work/cert.pem" --nh-tls-key-file "$work/key.pem" \
    --log-level warning 2>"$work/api.log" & pids+=($!)
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$api_port/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$api_port/health/ready" >/dev/null || { echo "the API did not start; see $work/api.log" >&2; exit 1; }
endpoint="sb://127.0.0.1:$nh_port/"
full=$("$bin" apps connection-string shop --endpoint "$endpoint")
listen=$("$bin" apps connection-string shop --endpoint "$endpoint" --rule DefaultListenSharedAccessSignature)
other=$("$bin" apps connection-string news --endpoint "$endpoint")
echo "==> NH listener on https://127.0.0.1:$nh_port; hub shop: $(echo "$full" | sed 's/SharedAccessKey=.*/SharedAccessKey=***/')"

REQUESTS_CA_BUNDLE="$work/cert.pem" SSL_CERT_FILE="$work/cert.pem" \
    "$venv/bin/python" scripts/nh/clients.py --full "$full" --listen "$listen" --other "$other" --out "$work/sent.json" \
    --redis-port "$port"

# What Redis holds for each accepted send: the app's notification, as the clients asked.
python3 - "$work/sent.json" "$port" <<'PY'
import json, subprocess, sys
sent = json.load(open(sys.argv[1]))
port = sys.argv[2]
def cli(*args):
    return subprocess.run(["redis-cli", "-p", port, *args], capture_output=True, text=True, check=True).stdout
keys = [k for k in cli("--scan", "--pattern", "richpush:app:shop:*:notif:*").split() if k]
records = []
for key in keys:
    flat = cli("HGETALL", key).split("\n")
    records.append(dict(zip(flat[0::2], flat[1::2])))
def canonical(value):
    return json.dumps(value, sort_keys=True) if value is not None else ""
found = sorted((r.get("target"), r.get("properties", ""), canonical(json.loads(r["native"]) if "native" in r else None), r.get("creator"),
                r.get("app"), r.get("state")) for r in records)
wanted = sorted((s["tags"], json.dumps(s["properties"], separators=(",", ":")) if "properties" in s else "", canonical(s.get("native")),
                 "nh.DefaultFullSharedAccessSignature", "shop", s.get("state", "queued")) for s in sent)
if found != wanted:
    print(f"Redis holds {found}\nthe clients sent {wanted}", file=sys.stderr)
    sys.exit(1)
news = [k for k in cli("--scan", "--pattern", "richpush:app:news:*:notif:*").split() if k]
if news:
    print(f"hub news holds {news}: nothing was sent to it", file=sys.stderr)
    sys.exit(1)
print(f"==> Redis holds the {len(records)} notifications of hub shop the clients sent, as sent (target, properties, creator)")
installations = sorted(k for k in cli("--scan", "--pattern", "richpush:*inst:*").split() if k)
ids = [k.rsplit(":", 1)[1] for k in installations]
# iphone-1 and the JS-style registration are left; browser-1, the .NET-style one and h-1 are not.
if "iphone-1" not in ids or "browser-1" in ids or "h-1" in ids or len(ids) != 2:
    print(f"Redis holds the installations {installations}; the clients left iphone-1 and one registration", file=sys.stderr)
    sys.exit(1)
fields = cli("HGETALL", [k for k in installations if k.endswith(":iphone-1")][0]).split("\n")
iphone = dict(zip(fields[0::2], fields[1::2]))
if iphone.get("owner") != "alice" or json.loads(iphone.get("tags", "[]")) != ["news", "username:alice"] or iphone.get("platform") != "apns":
    print(f"iphone-1 is {iphone}: not as patched (user alice, tags news)", file=sys.stderr)
    sys.exit(1)
print("==> Redis holds installation iphone-1 as put and patched (user alice, tag news); browser-1 is gone")
PY
echo "==> NH clients: both sent, every refusal as NH gives it"

# NH's sends delivered: hub news gets credentials for a local APNs, FCM and Web Push, each of
# which shows what reached it, and one worker sends through all three (--adapter apns,fcm,webpush):
# apns-sim logs each request with its payload; fcm-sim (a service account made for the run) logs
# each messages:send (token and status; it has no payload log) and passes the message on to the
# simulated hub's device channels in this Redis; webpush-sim (a VAPID key made for the run) logs
# each push and hands its body, encrypted, to the subscriber's WebSocket.
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/AuthKey.p8"
apns_port=$(free_port)
"$bin" apns-sim --port "$apns_port" --team-id NHTEAM0001 --key-id NHKEY00001 --key-file "$work/AuthKey.p8" --topic com.example.news \
    --cert-dir "$work/apns" --no-forward --log-requests --log-payloads >"$work/apns.log" 2>"$work/apns.err" & pids+=($!)
fcm_port=$(free_port)
"$bin" fcm-sim --port "$fcm_port" --service-account "$work/fcm/service-account.json" --make-credentials --cert-dir "$work/fcm" \
    --log-requests >"$work/fcm.log" 2>"$work/fcm.err" & pids+=($!)
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/vapid.pem"
# The VAPID public key as PushManager.subscribe() takes it: the uncompressed point, base64url.
vapid_public=$(openssl pkey -in "$work/vapid.pem" -pubout -outform DER | tail -c 65 | base64 -w0 | tr '+/' '-_' | tr -d '=')
webpush_port=$(free_port)
"$bin" webpush-sim --port "$webpush_port" --cert-dir "$work/webpush" --log-requests >"$work/webpush.log" 2>"$work/webpush.err" & pids+=($!)
for sim in apns fcm webpush; do
    for _ in $(seq 1 300); do grep -q listening "$work/$sim.err" && break; sleep 0.1; done
    grep -q listening "$work/$sim.err" || { echo "$sim-sim did not start; see $work/$sim.err" >&2; exit 1; }
done
# The default app's too: a worker starts with the default app's credentials.
for app in news default; do
    "$bin" apps set "$app" --apns-key-file "$work/AuthKey.p8" --apns-key-id NHKEY00001 --apns-team-id NHTEAM0001 \
        --apns-bundle-id com.example.news --fcm-service-account "$work/fcm/service-account.json" \
        --web-push-private-key-file "$work/vapid.pem" --web-push-subject mailto:nh@example.com >/dev/null
done
"$bin" worker --adapter apns,fcm,webpush --apns-url "https://127.0.0.1:$apns_port" --apns-sandbox-url "https://127.0.0.1:$apns_port" \
    --apns-ca-file "$work/apns/ca.pem" --fcm-url "https://127.0.0.1:$fcm_port" --fcm-ca-file "$work/fcm/ca.pem" \
    --webpush-ca-file "$work/webpush/ca.pem" --log-level warning 2>"$work/worker.log" & pids+=($!)
news_full=$("$bin" apps connection-string news --endpoint "$endpoint")
# scripts/nh/delivery.py: what reached "Apple" (iPhones, templates, $InstallationId, registrations, direct and batch sends).
REQUESTS_CA_BUNDLE="$work/cert.pem" SSL_CERT_FILE="$work/cert.pem" \
    "$venv/bin/python" scripts/nh/delivery.py --full "$news_full" --apns-log "$work/apns.log" --redis-port "$port" || {
    echo "NH sends not delivered as NH delivers them; see $work/worker.log, $work/apns.log" >&2
    exit 1
}
echo "==> NH sends delivered through apns-sim as NH delivers them (native as written, templates to template devices alone)"
# scripts/nh/delivery_more.py: what reached "Google" and the browsers' push service (fcmv1, gcm and
# browser installations; fcmv1, browser and template sends), the devices played by the script.
REQUESTS_CA_BUNDLE="$work/cert.pem" SSL_CERT_FILE="$work/cert.pem" \
    "$venv/bin/python" scripts/nh/delivery_more.py --full "$news_full" --apns-log "$work/apns.log" --fcm-log "$work/fcm.log" \
    --webpush-log "$work/webpush.log" --webpush-url "https://127.0.0.1:$webpush_port" --webpush-ca "$work/webpush/ca.pem" \
    --vapid-public-key "$vapid_public" --redis-port "$port" || {
    echo "NH's fcmv1, browser or template sends not delivered as NH delivers them; see $work/worker.log, $work/fcm.log, $work/webpush.log" >&2
    exit 1
}
echo "==> NH sends delivered through fcm-sim and webpush-sim as NH delivers them (fcmv1 as written with each token, browser payloads byte for byte, templates per platform)"

# Moving a hub: nh-export and nh-import in NH's bulk format (scripts/nh/migration.py).
python3 scripts/nh/migration.py --bin "$bin" --dir "$work"
echo "==> hubs moved with nh-export and nh-import (NH's bulk registration format)"

# The load generator's NH paths, small (scripts/loadtest.sh --via nh and nh-batch: an NH sender's
# sends and batch direct sends, each to every device): every push delivered once.
for via in nh nh-batch; do
    out=$(RICHPUSH_BIN="$bin" scripts/loadtest.sh --via "$via" --audience all --notifications 20 --devices 10 --timeout 120 2>&1) || {
        echo "$out" >&2
        echo "loadtest --via $via failed" >&2
        exit 1
    }
    grep -q "lost 0  duplicated 0  failed 0" <<<"$out" || { echo "$out" >&2; echo "loadtest --via $via lost or duplicated pushes" >&2; exit 1; }
    echo "==> loadtest --via $via: $(grep 'delivered to devices' <<<"$out" | tr -s ' ')"
done
