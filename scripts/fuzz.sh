#!/usr/bin/env bash
# API fuzzing: schemathesis generates requests from openapi.yaml (valid ones and malformed ones,
# unexpected methods and media types, chains that follow the document's links) and checks every
# answer of a live `richpush api` against the document: no 5xx, and status codes, media types,
# headers and bodies exactly as documented. One pass as a plain user (alice), one as an admin
# (root); then scripts/fuzz/probes.py sends the requests a fuzzer rarely makes (no or wrong
# credentials, API keys of each scope, If-None-Match, other users' ids, every undocumented
# method, bodies over the limits, failed logins until 429, Redis stopped for 503) and checks those
# answers the same way. Then scripts/fuzz/nh.py fuzzes the API's Notification Hubs listener
# (started with --nh-port over TLS, a certificate made for the run, hub `shop` with NH's two
# default rules): a few hundred seeded requests mutated from valid ones (registration XML with
# DOCTYPEs, entities, deep and wide trees, bytes that are not UTF-8; installation JSON and JSON
# Patches of any shape; ServiceBusNotification-Tags/-Format/-ScheduleTime and apns-* headers;
# mutated SAS tokens), each answered below 500 in NH's error XML, holding no key and nothing of
# /etc/passwd, the listener still taking a valid send after them (about 5 s); with Redis stopped,
# NH's 503 with Retry-After. Exits non-zero on any failure; each failure is printed with a curl
# command that reproduces it (an NH one with its seed and number: FUZZ_NH_SEED=S FUZZ_NH_ONLY=N).
#
# Usage: scripts/fuzz.sh [--examples N] [--seconds S] [-- SCHEMATHESIS_ARGS...]
#   --examples N  test cases per operation and phase (default 25: under a minute in all)
#   --seconds S   time budget of each pass; with it, fuzzing and stateful testing go on until the
#                 budget is spent (default: no budget, stop after N examples)
#   -- ...        passed to `schemathesis run` as they are (e.g. --seed 1234, --include-path-regex
#                 '^/api/register', --phases fuzzing)
# A full run (about 20 minutes): scripts/fuzz.sh --examples 1000 --seconds 600
#
# Environment: FUZZ_PARSER_ITERATIONS (parser fuzz tests, default 200000; 0 skips them), RICHPUSH_BIN (default .build/debug/richpush; this script does not build it),
# FUZZ_API_ARGS (more `richpush api` flags, split on spaces), FUZZ_USERS (passes, default
# "alice root"), FUZZ_CHECKS (schemathesis checks), FUZZ_SPEC (the document to test against:
# a file or a URL; default the repository's openapi.yaml, which may be newer than the binary's),
# FUZZ_NH_REQUESTS (NH listener requests, default 400; 0 skips them), FUZZ_NH_SEED (default: a
# random one, printed).
# Files: ~/.cache/richpush/fuzz-venv (schemathesis, installed once per machine and reused by every
# clone; RICHPUSH_FUZZ_VENV names another), .tmp/fuzz/run-* (Redis, API log, reports; removed
# after a clean run, kept after a failing one).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

examples=25
seconds=""
passthrough=()
while [ $# -gt 0 ]; do
    case "$1" in
        --examples) examples=${2:?--examples needs a number}; shift 2 ;;
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        --) shift; passthrough=("$@"); break ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$examples" =~ ^[1-9][0-9]*$ ]] || { echo "error: --examples must be a positive integer" >&2; exit 2; }
[ -z "$seconds" ] || [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "error: --seconds must be a positive integer" >&2; exit 2; }

BIN=${RICHPUSH_BIN:-.build/debug/richpush}
if [ ! -x "$BIN" ]; then
    echo "error: no richpush binary at $BIN; build it (swift build --product richpush) or set RICHPUSH_BIN" >&2
    exit 1
fi
spec=${FUZZ_SPEC:-openapi.yaml}
if [[ "$spec" != http* ]]; then
    [ -f "$spec" ] || { echo "error: no file $spec" >&2; exit 1; }
    spec="$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")"
fi
checks=${FUZZ_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,unsupported_method,allow_header_conformance}
read -r -a users <<<"${FUZZ_USERS:-alice root}"

ensure_apt_packages redis-server redis-tools curl openssl
private_tmp fuzz

# schemathesis in a virtualenv of its own, installed once and reused while the pins are the same.
# Outside the clone, so a fresh clone (CI) reuses it instead of installing it again.
venv="${RICHPUSH_FUZZ_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/richpush/fuzz-venv}"
pins=("schemathesis==4.32.5" "openapi-spec-validator==0.7.2")
ensure_venv "$venv" "${pins[@]}"

started=$SECONDS
dir=$(mktemp -d "$TMPDIR/run-XXXX")
redis_dir="$dir/redis"
redis_port=$(free_port)
api_port=$(free_port)
api_pid=""
worker_pid=""
status=1
# Stops exactly what this script started: the API and the worker by their pids, Redis by its
# pid file.
stop_pid() {
    local pid=$1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
cleanup() {
    stop_pid "$api_pid"
    stop_pid "$worker_pid"
    if [ -f "$redis_dir/redis.pid" ]; then
        local redis_pid
        redis_pid=$(cat "$redis_dir/redis.pid")
        # Not a child of this shell (it daemonized): signal it, then wait for it to go.
        kill -TERM "$redis_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do pid_running "$redis_pid" || break; sleep 0.1; done
        kill -KILL "$redis_pid" 2>/dev/null || true
    fi
    if [ "$status" -eq 0 ]; then rm -rf "$dir"; else echo "fuzz: logs and reports kept in $dir" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "==> checking $spec"
if [[ "$spec" != http* ]]; then "$venv/bin/openapi-spec-validator" "$spec"; fi

start_private_redis "$redis_dir" "$redis_port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$redis_port/0"

declare -A passwords=([alice]=alice-fuzz-pw [root]=root-fuzz-pw [bob]=bob-fuzz-pw)
echo "${passwords[alice]}" | "$BIN" users add alice --cost 4 >/dev/null
echo "${passwords[root]}" | "$BIN" users add root --cost 4 --role admin >/dev/null
echo "${passwords[bob]}" | "$BIN" users add bob --cost 4 >/dev/null

# `richpush api` flags, in one array: those this binary knows (its --help says), then FUZZ_API_ARGS.
api_help=$("$BIN" api --help 2>&1 || true)
# A small payload limit, so that 413 is cheap to reach.
max_payload=65536
api_args=(api --host 127.0.0.1 --port "$api_port" --log-level warning --max-payload-bytes "$max_payload")
knows() { grep -q -- "$1" <<<"$api_help"; }
knows --bcrypt-cost && api_args+=(--bcrypt-cost 4)
# The fuzzer creates hundreds of notifications, registrations and random tags in a minute: quotas
# high enough that it explores the API rather than one 429 (the quota paths still run).
knows --quota-notifications-per-minute && api_args+=(--quota-notifications-per-minute 1000000)
knows --quota-registrations && api_args+=(--quota-registrations 1000000)
knows --quota-tags && api_args+=(--quota-tags 1000000)
# The fuzzer sends made-up credentials too: no throttling of the whole address (the probes check
# the per-user throttle, which stays as it is).
knows --login-free-failures-per-address && api_args+=(--login-free-failures-per-address 1000000)
# A short body timeout, so that its probe (the connection closed) is quick.
body_timeout=""
knows --body-timeout && body_timeout=2 && api_args+=(--body-timeout "$body_timeout")
# The Notification Hubs listener, when this binary has one: a key-encryption key (NH's rules are
# sealed with it), a certificate for 127.0.0.1 made for the run, hub shop with NH's two default rules.
nh_port=""
nh_requests=${FUZZ_NH_REQUESTS:-400}
if knows --nh-port && [ "$nh_requests" != 0 ]; then
    "$BIN" apps new-kek >"$dir/kek"
    export RICHPUSH_KEK_FILE="$dir/kek"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$dir/nh-key.pem" -out "$dir/nh-cert.pem" \
        -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
    "$BIN" apps create shop >/dev/null
    "$BIN" apps nh-rules shop --defaults >/dev/null
    nh_port=$(free_port)
    api_args+=(--nh-port "$nh_port" --nh-tls-cert-file "$dir/nh-cert.pem" --nh-tls-key-file "$dir/nh-key.pem")
fi
read -r -a extra_api_args <<<"${FUZZ_API_ARGS:-}"
api_args+=("${extra_api_args[@]}")
"$BIN" "${api_args[@]}" >"$dir/api.log" 2>&1 &
api_pid=$!
# A worker delivers to the simulated hub, so that status shows devices and deliveries.
"$BIN" worker --concurrency 4 --maintenance-interval 2 >"$dir/worker.log" 2>&1 &
worker_pid=$!
base="http://127.0.0.1:$api_port"
for _ in $(seq 1 100); do
    curl -sf "$base/health/ready" >/dev/null 2>&1 && break
    kill -0 "$api_pid" 2>/dev/null || { echo "error: richpush api exited; its log:" >&2; cat "$dir/api.log" >&2; exit 1; }
    sleep 0.1
done
curl -sf "$base/health/ready" >/dev/null || { echo "error: richpush api is not ready on $base" >&2; exit 1; }
echo "==> richpush api on $base (pid $api_pid): ${api_args[*]:1}"
if [[ "$spec" != http* ]] && ! curl -sf "$base/openapi.yaml" | cmp -s - "$spec"; then
    echo "note: the binary serves another openapi.yaml than $spec (built before its last change); testing against $spec"
fi

# Something to find: notification 1 (the document's example id) is alice's; 2 is root's to the
# tag sports, which alice's device carries (readable by alice once the worker has sent it); bob
# holds the handle device-token-1 (the document's example), so registering it meets 409.
call() { # USER METHOD PATH [CURL ARGS...]
    local user=$1 method=$2 path=$3
    shift 3
    curl -sS -u "$user:${passwords[$user]}" -X "$method" "$@" "$base$path"
}
json=(-H 'Content-Type: application/json')
alice_id=$(call alice POST '/api/register?handle=fuzz-alice' | tr -d '"')
call alice PUT "/api/register/$alice_id" "${json[@]}" -d '{"Platform":"apns","Handle":"fuzz-alice","Tags":["sports"]}' >/dev/null
bob_id=$(call bob POST '/api/register?handle=device-token-1' | tr -d '"')
call bob PUT "/api/register/$bob_id" "${json[@]}" -d '{"Platform":"fcm","Handle":"device-token-1"}' >/dev/null
call alice POST /api/notifications >/dev/null
call root POST /api/notifications "${json[@]}" -d '{"richType":"text","payload":"Kick-off at 8","target":"sports"}' >/dev/null
for _ in $(seq 1 100); do
    call alice GET /api/notifications/2 -o /dev/null -f 2>/dev/null && break
    sleep 0.1
done
call alice GET /api/notifications/1 -o /dev/null -f || { echo "error: seeding the data failed" >&2; exit 1; }
call alice GET /api/notifications/2 -o /dev/null -f || echo "note: notification 2 was not delivered to alice's device within 10 s (is the worker running? see $dir/worker.log)"
nh_env=()
if [ -n "$nh_port" ]; then
    for _ in $(seq 1 50); do curl -s -o /dev/null --cacert "$dir/nh-cert.pem" "https://127.0.0.1:$nh_port/" && break; sleep 0.1; done
    nh_env=(FUZZ_NH_CA="$dir/nh-cert.pem" FUZZ_NH_DIR="$dir" FUZZ_NH_REQUESTS="$nh_requests"
            FUZZ_NH_FULL="$("$BIN" apps connection-string shop --endpoint "sb://127.0.0.1:$nh_port/")"
            FUZZ_NH_LISTEN="$("$BIN" apps connection-string shop --endpoint "sb://127.0.0.1:$nh_port/" --rule DefaultListenSharedAccessSignature)")
    echo "==> NH listener on https://127.0.0.1:$nh_port (hub shop)"
fi
# API keys of alice's, one per scope, for the probes (a binary without `richpush keys` skips them).
declare -A keys=()
if "$BIN" keys --help >/dev/null 2>&1; then
    for scope in read send admin; do
        keys[$scope]=$("$BIN" keys create alice --scope "$scope" --label fuzz | tail -1)
    done
fi

# "OPERATIONS FAILED" of a JUnit report (one test case per operation); "0 1" when it is unreadable.
junit_counts() {
    python3 - "$1" <<'PY' 2>/dev/null || echo "0 1"
import sys, xml.etree.ElementTree as ET
cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
print(len(cases), sum(any(child.tag in ("failure", "error") for child in case) for case in cases))
PY
}

# The statuses seen per documented operation, from a HAR report: what the run reached.
status_table() {
    "$venv/bin/python" - "$@" <<'PY'
import collections, json, re, sys, urllib.parse, yaml
har, spec = sys.argv[1], sys.argv[2]
import urllib.request
paths = yaml.safe_load(urllib.request.urlopen(spec) if spec.startswith("http") else open(spec))["paths"]
patterns = [(re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(p)) + "$"), p) for p in paths]
seen = collections.defaultdict(collections.Counter)
for entry in json.load(open(har))["log"]["entries"]:
    method, url = entry["request"]["method"], entry["request"]["url"]
    path = urllib.parse.urlsplit(url).path
    template = next((t for rx, t in patterns if rx.match(path)), "(unknown path)")
    op = f"{method} {template}" if method.lower() in paths.get(template, {}) else f"other {template}"
    seen[op][entry["response"]["status"]] += 1
for op in sorted(seen):
    print(f"    {op:<44} " + "  ".join(f"{code}x{n}" for code, n in sorted(seen[op].items())))
PY
}

# Whether the API still runs; if not, says so with the crash's first lines and its frames in our
# sources (the rest of the run would only count connection errors).
api_dead=""
api_alive() {
    kill -0 "$api_pid" 2>/dev/null && return 0
    [ -z "$api_dead" ] || return 1
    api_dead=1
    echo "==> richpush api died; from $dir/api.log:" >&2
    { grep -m1 -iE 'fatal error|panic' "$dir/api.log"; grep -E ' in richpush at .*/(Sources|checkouts)/' "$dir/api.log" | head -12; } >&2 || true
    summary+=("richpush api died during the run (see above)")
    failed=$((failed + 1))
    return 1
}

failed=0
summary=()
total_ops=0
total_bad=0
for user in "${users[@]}"; do
    [ -n "${passwords[$user]:-}" ] || { echo "error: no fuzz user '$user' (alice, root, bob)" >&2; exit 2; }
    echo "==> schemathesis as $user: ${examples} examples per operation${seconds:+, ${seconds} s}"
    args=(run "$spec" --url "$base" --auth "$user:${passwords[$user]}" --checks "$checks"
          --max-examples "$examples" --continue-on-failure --workers 1 --request-timeout 10 --generation-database none
          --no-color --report junit,har --report-junit-path "$dir/$user.junit.xml" --report-har-path "$dir/$user.har"
          --report-dir "$dir")
    [ -z "$seconds" ] || args+=(--max-time "$seconds")
    set +e
    (cd "$dir" && "$venv/bin/schemathesis" "${args[@]}" "${passthrough[@]}") 2>&1 | tee "$dir/$user.log"
    pass_status=${PIPESTATUS[0]}
    set -e
    read -r ops bad <<<"$(junit_counts "$dir/$user.junit.xml")"
    echo "==> statuses the API answered to $user, by operation (method outside the document: 'other')"
    status_table "$dir/$user.har" "$spec" 2>/dev/null || echo "    (no readable HAR report)"
    cases=$(grep -A1 '^Test cases:' "$dir/$user.log" | tail -1 | sed 's/^ *//' || true)
    summary+=("$user: $ops suites (operations and stateful), $bad failed; test cases: ${cases:-?}")
    if [ "$pass_status" -ne 0 ] || [ "$bad" -ne 0 ]; then failed=$((failed + 1)); fi
    total_ops=$((total_ops + ops))
    total_bad=$((total_bad + bad))
    api_alive || break
done

# The probes, with Redis up, then once this script has stopped it (by its pid file).
probe_env=(FUZZ_PASSWORD_ALICE="${passwords[alice]}" FUZZ_PASSWORD_ROOT="${passwords[root]}" FUZZ_PASSWORD_BOB="${passwords[bob]}"
           FUZZ_KEY_READ="${keys[read]:-}" FUZZ_KEY_SEND="${keys[send]:-}" FUZZ_KEY_ADMIN="${keys[admin]:-}"
           FUZZ_REGISTRATION_BOB="$bob_id" FUZZ_MAX_PAYLOAD="$max_payload" FUZZ_BODY_TIMEOUT="$body_timeout")
probe_pass() { # MODE
    echo "==> contract probes (Redis $([ "$1" = up ] && echo up || echo stopped))"
    set +e
    env "${probe_env[@]}" "$venv/bin/python" scripts/fuzz/probes.py "$spec" "$base" "$1" 2>&1 | tee "$dir/probes-$1.log"
    local probe_status=${PIPESTATUS[0]}
    set -e
    local counts
    counts=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$dir/probes-$1.log" | tail -1)
    read -r good _ bad _ <<<"${counts:-0 passed, 1 failed}"
    summary+=("probes ($1): ${counts:-did not finish}")
    total_ops=$((total_ops + good + bad))
    total_bad=$((total_bad + bad))
    if [ "$probe_status" -ne 0 ]; then failed=$((failed + 1)); fi
}
# The NH listener's fuzz (scripts/fuzz/nh.py), with Redis up, then stopped.
nh_pass() { # MODE
    [ -n "$nh_port" ] || return 0
    echo "==> NH listener fuzz (Redis $([ "$1" = up ] && echo up || echo stopped))"
    set +e
    PYTHONDONTWRITEBYTECODE=1 env "${nh_env[@]}" python3 scripts/fuzz/nh.py "$1" 2>&1 | tee "$dir/nh-$1.log"
    local nh_status=${PIPESTATUS[0]}
    set -e
    local counts
    counts=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$dir/nh-$1.log" | tail -1)
    read -r good _ bad _ <<<"${counts:-0 passed, 1 failed}"
    local seed
    seed=$(grep -oE 'FUZZ_NH_SEED=[0-9]+' "$dir/nh-$1.log" | head -1 || true)
    summary+=("NH listener fuzz ($1): ${counts:-did not finish}${seed:+ ($seed)}")
    total_ops=$((total_ops + good + bad))
    total_bad=$((total_bad + bad))
    if [ "$nh_status" -ne 0 ]; then failed=$((failed + 1)); fi
}
if api_alive; then
    probe_pass up
    api_alive && nh_pass up
    redis_pid=$(cat "$redis_dir/redis.pid")
    kill -TERM "$redis_pid"
    for _ in $(seq 1 50); do pid_running "$redis_pid" || break; sleep 0.1; done
    api_alive && probe_pass down
    api_alive && nh_pass down
fi

if kill -0 "$api_pid" 2>/dev/null && grep -qiE 'fatal error|program crashed' "$dir/api.log"; then
    echo "==> richpush api logged a crash:" >&2
    grep -iE 'fatal error|program crashed' "$dir/api.log" | head -5 >&2
    failed=$((failed + 1))
fi

# The parsers on their own: the tag-expression, JSON and multipart fuzz tests (Swift Testing) with
# many more iterations than the test suite runs (built by `swift build --build-tests`).
iterations=${FUZZ_PARSER_ITERATIONS:-200000}
if [ "$iterations" != 0 ]; then
    echo "==> parser fuzz tests, $iterations iterations each"
    set +e
    # The test binary beside the richpush binary when there is one (`swift test --skip-build`
    # runs it after loading the package: ~10 s more, and SwiftPM's lock on .build).
    tests="$(dirname "$BIN")/RichPushPackageTests.xctest"
    if [ -x "$tests" ]; then
        RICHPUSH_FUZZ_ITERATIONS=$iterations NO_COLOR=1 "$tests" --testing-library swift-testing --filter 'FuzzTests' 2>&1 | tail -3 | tee "$dir/parsers.log"
    else
        RICHPUSH_FUZZ_ITERATIONS=$iterations swift test --skip-build --filter 'FuzzTests' 2>&1 | tail -3 | tee "$dir/parsers.log"
    fi
    parser_status=${PIPESTATUS[0]}
    set -e
    summary+=("parser fuzz tests ($iterations iterations): $([ "$parser_status" -eq 0 ] && echo passed || echo FAILED)")
    total_ops=$((total_ops + 1))
    if [ "$parser_status" -ne 0 ]; then failed=$((failed + 1)); total_bad=$((total_bad + 1)); fi
fi

echo
for line in "${summary[@]}"; do echo "fuzz: $line"; done
echo "fuzz: $(( total_ops - total_bad )) passed, $total_bad failed"
echo "fuzz: ${#users[@]} passes in $(( SECONDS - started )) s against $BIN"
[ "$failed" -eq 0 ] && status=0
exit "$status"
