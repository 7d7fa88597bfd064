#!/usr/bin/env bash
# Hostile-input and authorization regression suite, against an already-built richpush binary
# (it never builds). Starts a private redis-server (with a password), users alice, bob (user) and
# root (admin), `richpush api` (port P) with its Notification Hubs listener (--nh-port, TLS with a
# certificate openssl makes for the run; apps `shop` and `news` with NH's two default rules, the
# run's key-encryption key in RICHPUSH_KEK_FILE), a second API "api2" with small quotas and short
# timeouts, and one `richpush worker`; runs scripts/security/run.py (Python 3 stdlib only), which
# prints one line per case, `ok name` or `FAIL name: why`, then `N passed, M failed`; exits
# non-zero on any failure. Stops what it started, by pid, on exit. Files: .tmp/security/run-XXXX/
# (*.log kept).
#
# The NH cases (scripts/security/cases_nh.py, `nh/…`): SAS refusals (no token, malformed, a wrong
# key or key name answered alike, expired, a Listen rule sending, another hub's key or URI, a hub
# that does not exist: 401/403 with NH's XML error, no key or expected signature in any answer);
# hostile registrations (XXE by file, parameter entity, external DTD and an http URL never
# fetched, billion laughs, nesting, element and attribute counts, truncated, not UTF-8: 400; over
# 64 KiB: 413); hostile installations and JSON Patch (deep, huge arrays, wrong ops and paths: 400;
# oversized: 413, chunked too); hostile send headers (Tags, Format, ScheduleTime: 400); then the
# same API process still answers.
#
#   scripts/security.sh                          # BIN=.build/debug/richpush
#   RICHPUSH_BIN=.build/release/richpush scripts/security.sh
#   SEC_ONLY=quota scripts/security.sh           # only cases whose name contains "quota"
#   SEC_ONLY=nh/ scripts/security.sh             # only the NH listener's cases
#   SEC_TIMING=1 SEC_ONLY=timing RICHPUSH_BIN=.build/release/richpush scripts/security.sh
#                                                # the 404 timing figures (opt-in: scripts/security/cases_timing.py)
#   SEC_TIMING=1 SEC_ONLY=nh/sas/timing scripts/security.sh
#                                                # an unknown NH key name against a wrong key (opt-in too)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

# ---- adjust here ------------------------------------------------------------------------------
API_FLAGS=(--bcrypt-cost 4 --log-level info)
API2_FLAGS=(--bcrypt-cost 4 --log-level info
            --quota-notifications-per-minute 5 --quota-payload-bytes 100000 --quota-registrations 3 --quota-tags 5
            --idle-timeout 2 --body-timeout 2)
WORKER_FLAGS=(--log-level info)
# Or from the environment (split on spaces): SECURITY_API_FLAGS, SECURITY_API2_FLAGS, SECURITY_WORKER_FLAGS.
[ -n "${SECURITY_API_FLAGS:-}" ] && read -ra API_FLAGS <<<"$SECURITY_API_FLAGS"
[ -n "${SECURITY_API2_FLAGS:-}" ] && read -ra API2_FLAGS <<<"$SECURITY_API2_FLAGS"
[ -n "${SECURITY_WORKER_FLAGS:-}" ] && read -ra WORKER_FLAGS <<<"$SECURITY_WORKER_FLAGS"
# -----------------------------------------------------------------------------------------------

ensure_apt_packages redis-server redis-tools curl openssl
BIN=${RICHPUSH_BIN:-.build/debug/richpush}
[ -x "$BIN" ] || { echo "error: no richpush binary at $BIN (build it, or set RICHPUSH_BIN)" >&2; exit 2; }
BIN=$(realpath "$BIN")

private_tmp security
RUN=$(mktemp -d "$PWD/.tmp/security/run-XXXX")
export PYTHONDONTWRITEBYTECODE=1

# Kills the pids in $RUN/*.pid that are still our binary (TERM, then KILL), then the private redis.
cleanup() {
    set +e
    local pids=() pid file
    for file in "$RUN"/*.pid; do
        [ -f "$file" ] || continue
        pid=$(cat "$file")
        [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "$BIN "* ]] && pids+=("$pid")
    done
    [ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2>/dev/null
    for _ in $(seq 1 30); do
        local alive=()
        for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
        [ ${#alive[@]} -eq 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
    kill_private_redis "$RUN"
    return 0
}
trap cleanup EXIT
trap "exit 130" INT TERM

# start NAME ARGV...: runs ARGV in the background, stderr to $RUN/NAME.log, and notes pid and argv.
start() {
    local name=$1
    shift
    printf '%s\0' "$@" >"$RUN/$name.argv"
    "$@" </dev/null >"$RUN/$name.stdout" 2>"$RUN/$name.log" &
    echo $! >"$RUN/$name.pid"
    disown $!  # no "Killed" job notices after the summary line
}

REDIS_PORT=$(free_port)
REDIS_PASSWORD="redis-pw-$(python3 -c 'import secrets; print(secrets.token_hex(10))')"
start_private_redis "$RUN/redis" "$REDIS_PORT" --requirepass "$REDIS_PASSWORD"
export RICHPUSH_REDIS_URL="redis://:$REDIS_PASSWORD@127.0.0.1:$REDIS_PORT/0"

declare -A PASSWORDS
for user in alice bob root; do
    PASSWORDS[$user]="$user-pw-$(python3 -c 'import secrets; print(secrets.token_hex(10))')"
    role=user
    [ "$user" = root ] && role=admin
    echo "${PASSWORDS[$user]}" | "$BIN" users add "$user" --cost 4 --role "$role" >/dev/null
done

# The NH listener's: a key-encryption key (apps' NH rules are sealed with it; every process of the
# run reads it), a certificate for 127.0.0.1, hubs shop and news with NH's two default rules.
"$BIN" apps new-kek >"$RUN/kek"
export RICHPUSH_KEK_FILE="$RUN/kek"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$RUN/nh-key.pem" -out "$RUN/nh-cert.pem" \
    -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
for app in shop news; do
    "$BIN" apps create "$app" >/dev/null
    "$BIN" apps nh-rules "$app" --defaults >/dev/null
done

API_PORT=$(free_port)
API2_PORT=$(free_port)
NH_PORT=$(free_port)
start api "$BIN" api --port "$API_PORT" "${API_FLAGS[@]}" \
    --nh-port "$NH_PORT" --nh-tls-cert-file "$RUN/nh-cert.pem" --nh-tls-key-file "$RUN/nh-key.pem"
start api2 "$BIN" api --port "$API2_PORT" "${API2_FLAGS[@]}"
start worker "$BIN" worker "${WORKER_FLAGS[@]}"
for _ in $(seq 1 100); do  # both APIs and the NH listener answer within 10 s, or run.py reports what is down
    curl -sf "http://127.0.0.1:$API_PORT/health/live" >/dev/null 2>&1 &&
        curl -sf "http://127.0.0.1:$API2_PORT/health/live" >/dev/null 2>&1 &&
        curl -s -o /dev/null --cacert "$RUN/nh-cert.pem" "https://127.0.0.1:$NH_PORT/" 2>/dev/null && break
    sleep 0.1
done
ENDPOINT="sb://127.0.0.1:$NH_PORT/"
NH_FULL=$("$BIN" apps connection-string shop --endpoint "$ENDPOINT")
NH_LISTEN=$("$BIN" apps connection-string shop --endpoint "$ENDPOINT" --rule DefaultListenSharedAccessSignature)
NH_OTHER=$("$BIN" apps connection-string news --endpoint "$ENDPOINT")

echo "==> $BIN against redis :$REDIS_PORT, api :$API_PORT (NH listener https :$NH_PORT), api2 :$API2_PORT; logs in ${RUN#"$PWD"/}"
status=0
SEC_BIN=$BIN SEC_RUN_DIR=$RUN SEC_API_PORT=$API_PORT SEC_API2_PORT=$API2_PORT SEC_REDIS_PASSWORD=$REDIS_PASSWORD \
    SEC_PW_ALICE=${PASSWORDS[alice]} SEC_PW_BOB=${PASSWORDS[bob]} SEC_PW_ROOT=${PASSWORDS[root]} \
    SEC_NH_PORT=$NH_PORT SEC_NH_CA=$RUN/nh-cert.pem SEC_NH_FULL=$NH_FULL SEC_NH_LISTEN=$NH_LISTEN SEC_NH_OTHER=$NH_OTHER \
    timeout 300 python3 scripts/security/run.py || status=$?
exit $status
