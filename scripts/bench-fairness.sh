#!/usr/bin/env bash
# Benchmark (not a test) of issue 28: is one app's flood, fan-out or slow provider felt by
# another app? Same machine, same run, one private redis-server, three configurations side by
# side: FIFO (--scheduling fifo, arrival order), fair with equal weights, fair with weights 3:1
# (A:B). Two apps, app-a and app-b ("A" and "B"), each with an admin user, an API key and simulated devices
# (A's are iOS with APNs tokens, B's Android; both on the simulated hub unless said otherwise).
# Scenarios, each a run of `richpush-bench fairness` (one phase) against the API and workers:
#   solo-b   B alone, one single-device notification a second (B's solo baseline)
#   solo-a   A alone, flooding (as many notifications as it can, POST /api/notifications/batch)
#   flood    A floods for --seconds while B sends one a second
#   fanout   A sends one notification to --fanout-devices installations (tag fan-out; offline: the
#            hub holds each push) while B sends ten a second (a fan-out lasts seconds: more samples)
#   both     A and B both flood: Jain's fairness index of their throughputs; with 3:1, the shares.
#            Under fair scheduling both are paused while they flood and resumed together
#            (bench fairness --hold-load): the throughputs count from the resume until the first
#            app's backlog is gone, the window in which both contend for the workers
#   slow-*   A and B both flood, A's pushes through APNs to a local apns-sim (workers --adapter
#            apns,hub): slow-base answers at once, slow answers in 500 ms (apns-sim --delay-ms 500);
#            B's throughput with and without A's slow provider
# The solo phases run under fifo and fair-equal; fair 3:1 reuses fair-equal's (one app alone has
# no one to share with: weights do not apply). "Sent" is the push's arrival at the simulated
# device: the hub's Pub/Sub publish (or apns-sim accepting and forwarding it) plus one hop.
# Latency counts from the start of the create call. Throughput: pushes received within the load's
# window / the window. After each phase what is still queued is dropped (bench fairness
# --skip-backlog; B's notifications get up to 30 s first, and one dropped counts as undelivered),
# so a flood's backlog never spills into the next phase. Prints each of the issue's bars with PASS/FAIL, FIFO beside fair, into
# .tmp/bench-fairness/report/summary.txt, and writes .tmp/bench-fairness/report/report.html (self-contained,
# inline SVG charts) and each phase's JSON under .tmp/bench-fairness/report/<configuration>/.
# Usage: scripts/bench-fairness.sh [--seconds N (60)] [--fanout-devices N (200000)] [--quick]
#          [--workers K (2)] [--worker-concurrency C (64)] [--configs "fifo fair-equal fair-3to1"]
#          [--debug | --bin PATH] [--phases "solo-b solo-a flood fanout both slow-base slow"] [--keep-logs]
#          [--worker-args "ARGS"]
#   --quick: --seconds 10 --fanout-devices 20000 (a smoke run of about 3 minutes)
#   --debug builds the debug binary instead of release; --bin PATH (or RICHPUSH_BIN=PATH) uses a
#   binary already built. --phases runs only those phases; --keep-logs keeps the processes' logs
#   (they are kept anyway when the run fails). --worker-args adds options to every worker (e.g.
#   "--fair-unit-size 0" for the units of before that option, to compare). The default run took 10 min 46 s
#   on the shared 2-core VM (1 min of it registering the fan-out's installations), --quick 3 min.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

seconds=60 fanout_devices=200000 workers=2 concurrency=64 debug=0 configs="fifo fair-equal fair-3to1" keep_logs=0 worker_args=""
phases="solo-b solo-a flood fanout both slow-base slow"
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --fanout-devices) fanout_devices=$2; shift 2 ;;
        --quick) seconds=10 fanout_devices=20000; shift ;;
        --workers) workers=$2; shift 2 ;;
        --worker-concurrency) concurrency=$2; shift 2 ;;
        --configs) configs=$2; shift 2 ;;
        --phases) phases=$2; shift 2 ;;
        --keep-logs) keep_logs=1; shift ;;
        --worker-args) worker_args=$2; shift 2 ;;
        --debug) debug=1; shift ;;
        --bin) RICHPUSH_BIN=$2; shift 2 ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
# Phase lengths from --seconds: the flood is the issue's window; the others are shorter, to keep
# the default run short (each at least 5 s).
solo_b_seconds=$(python3 -c "print(max(5, round($seconds / 3)))") solo_a_seconds=$(python3 -c "print(max(5, round($seconds / 4)))")
both_seconds=$(python3 -c "print(max(5, round($seconds / 4)))") slow_seconds=$(python3 -c "print(max(5, round($seconds / 6)))")

ensure_apt_packages redis-server redis-tools curl python3 openssl
ensure_swift
private_tmp bench-fairness
out="$TMPDIR/report"
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=() api_pid="" worker_pids=()
# Stops exactly what this script started, by PID, then its redis-server; keeps the processes'
# logs (under $work) only when the run failed.
cleanup() {
    local status=$?
    # Only the script itself: a subshell killed before it execs its command inherits the trap.
    [ "$BASHPID" = "$$" ] || return 0
    for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
    for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
    kill_private_redis "$work"
    if [ "$status" = 0 ] && [ "$keep_logs" = 0 ]; then rm -rf "$work"; else echo "logs kept in $work" >&2; fi
}
trap cleanup EXIT

if [ -n "${RICHPUSH_BIN:-}" ]; then
    richpush_binary
elif [ "$debug" = 1 ]; then
    echo "==> building debug"
    swift build --product richpush >/dev/null
    swift build --product richpush-bench >/dev/null
    bin="$(swift build --show-bin-path)/richpush"
else
    richpush_binary
fi
bench_binary

# spawn LOG COMMAND...: starts COMMAND in the background, its standard error appended to LOG, and
# remembers its PID. The subshell execs it, so $! is the command's own PID (a plain `cmd &` in a
# function can leave a shell between, and killing that shell would miss the command).
spawn() {
    local log=$1
    shift
    (trap - EXIT; exec "$@" 2>>"$log") &
    pids+=($!)
}

# stop PID...: stops these processes (started here) and forgets them.
stop() {
    local pid keep=()
    for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
    for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
    for pid in ${pids[@]+"${pids[@]}"}; do [[ " $* " == *" $pid "* ]] || keep+=("$pid"); done
    pids=(${keep[@]+"${keep[@]}"})
}

port=$(free_port)
start_private_redis "$work/redis" "$port"
export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0" RICHPUSH_PARTITIONS=1 RICHPUSH_PASSWORD=fair-bench-pw
"$bin" apps new-kek >"$work/kek"
export RICHPUSH_KEK_FILE="$work/kek"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ec.pem" 2>/dev/null
openssl pkcs8 -topk8 -nocrypt -in "$work/ec.pem" -out "$work/AuthKey.p8"
apns_credentials=(--apns-key-file "$work/AuthKey.p8" --apns-key-id FAIRKEY001 --apns-team-id FAIRTEAM01)
"$bin" apps create app-a --name "A (floods)" "${apns_credentials[@]}" --apns-bundle-id com.example.a >/dev/null
"$bin" apps create app-b --name "B (one a second)" >/dev/null
for app in app-a app-b; do
    echo "$RICHPUSH_PASSWORD" | "$bin" users add load --app "$app" --role admin --cost 4 >/dev/null
done
key_a=$("$bin" keys create load --app app-a --scope send,read --label fairness | tail -1)
key_b=$("$bin" keys create load --app app-b --scope send,read --label fairness | tail -1)

# Two local APNs for A's slow-provider phases, started once: one answers at once, one after
# 500 ms. Each makes its own CA; the workers trust both (one file).
apns_port=$(free_port) slow_apns_port=$(free_port)
for sim in fast slow; do
    sim_port=$apns_port sim_args=()
    [ "$sim" = slow ] && sim_port=$slow_apns_port sim_args=(--delay-ms 500)
    spawn "$work/apns-$sim.log" "$bin" apns-sim --port "$sim_port" --team-id FAIRTEAM01 --key-id FAIRKEY001 --key-file "$work/AuthKey.p8" \
        --topic com.example.a --cert-dir "$work/apns-$sim" ${sim_args[@]+"${sim_args[@]}"}
done
for sim in fast slow; do
    for _ in $(seq 200); do grep -q listening "$work/apns-$sim.log" 2>/dev/null && break; sleep 0.1; done
    grep -q listening "$work/apns-$sim.log" || { cat "$work/apns-$sim.log"; echo "apns-sim ($sim) did not start" >&2; exit 1; }
done
# (ca.pem has no final newline: one is put between them.)
{ cat "$work/apns-fast/ca.pem"; echo; cat "$work/apns-slow/ca.pem"; echo; } >"$work/apns-ca.pem"

# ---- Weights: the one place that sets them. ------------------------------------------------
# set_weights APP=WEIGHT...: an app's share under fair scheduling, as an operator sets it:
# `richpush apps set APP --weight N`, on the app's record and in every partition. (Written
# straight into the scheduler hash, a worker's start put the record's weight back: the 3:1
# configuration then ran at 1:1.)
set_weights() {
    local pair
    for pair in "$@"; do
        "$bin" apps set "${pair%%=*}" --weight "${pair#*=}" >/dev/null
    done
}
# ---------------------------------------------------------------------------------------------

api_port=$(free_port)
base="http://127.0.0.1:$api_port"
start_api() { # SCHEDULING
    spawn "$work/api.log" "$bin" api --port "$api_port" --log-level warning --scheduling "$1" --quota-notifications-per-minute 0 \
        --quota-payload-bytes 0 --quota-registrations 0 --quota-tags 0 --bcrypt-cost 4
    api_pid=$!
    for _ in $(seq 200); do curl -sf "$base/health/ready" >/dev/null && return 0; sleep 0.1; done
    echo "the API did not start; see $work/api.log" >&2
    exit 1
}
start_workers() { # SCHEDULING NAME [WORKER OPTIONS...]
    local scheduling=$1 name=$2 i
    shift 2
    worker_pids=()
    for i in $(seq 1 "$workers"); do
        spawn "$work/worker-$name-$i.log" "$bin" worker --consumer "$name-$i" --scheduling "$scheduling" --concurrency "$concurrency" \
            --batch-size 128 --log-level warning --hold-hours 0.002 $worker_args "$@"
        worker_pids+=($!)
    done
}
apns_workers() { # SCHEDULING NAME URL: workers sending A's iOS devices to that apns-sim, the rest to the hub
    start_workers "$1" "$2" --adapter apns,hub --apns-url "$3" --apns-ca-file "$work/apns-ca.pem" "${apns_credentials[@]}" --apns-topic com.example.a
}

# phase CONFIG NAME [bench fairness options...]: one phase; its JSON in $out/CONFIG/NAME.json. It
# runs in the background and is waited for, so a signal stops it with the rest (a foreground
# command would hold the trap back until it ended).
phase() {
    local config=$1 name=$2 pid status=0
    shift 2
    [[ " $phases " == *" $name "* ]] || return 0
    echo "==> $config: $name"
    spawn "$work/phase-$config-$name.log" "$bench_bin" fairness --api "$base" --scheduling "$scheduling" --api-key "app-a=$key_a" \
        --api-key "app-b=$key_b" --platform app-a=apns --platform app-b=fcm --skip-backlog --json "$out/$config/$name.json" "$@"
    pid=$!
    wait "$pid" || status=$?
    stop "$pid"
    sed 's/^/    /' "$work/phase-$config-$name.log"
    return "$status"
}

rm -rf "$out"
mkdir -p "$out"
echo "==> registering $fanout_devices installations of A under tag fan"
"$bench_bin" fairness --api "$base" --register-audience "app-a=fan:$fanout_devices"

started_at=$(date +%s)
for config in $configs; do
    case "$config" in
        fifo) scheduling=fifo weights=(app-a=1 app-b=1) solos=1 ;;
        fair-equal) scheduling=fair weights=(app-a=1 app-b=1) solos=1 ;;
        fair-3to1) scheduling=fair weights=(app-a=3 app-b=1) solos=0 ;;
        *) echo "unknown configuration $config (fifo, fair-equal, fair-3to1)" >&2; exit 2 ;;
    esac
    mkdir -p "$out/$config"
    set_weights "${weights[@]}"
    start_api "$scheduling"
    start_workers "$scheduling" "$config"
    if [ "$solos" = 1 ]; then
        phase "$config" solo-b --rate app-b=1 --seconds "$solo_b_seconds" --drain-timeout 30
        phase "$config" solo-a --flood app-a --seconds "$solo_a_seconds" --drain-timeout 0
    fi
    phase "$config" flood --flood app-a --rate app-b=1 --seconds "$seconds" --drain-timeout 30
    phase "$config" fanout --fanout app-a=fan --rate app-b=10 --seconds 2 --drain-timeout 30
    # Under fair scheduling both apps are held while they flood and resumed together: their
    # shares are counted while each still has a backlog (two floods through one API create less
    # than the workers send, so without a backlog each app gets what it asks, whatever the weights).
    hold=(--drain-timeout 0); [ "$scheduling" = fair ] && hold=(--hold-load --drain-timeout 120)
    phase "$config" both --flood app-a --flood app-b --seconds "$both_seconds" "${hold[@]}"
    stop ${worker_pids[@]+"${worker_pids[@]}"}
    apns_workers "$scheduling" "$config-apns" "https://127.0.0.1:$apns_port"
    phase "$config" slow-base --flood app-a --flood app-b --seconds "$slow_seconds" --drain-timeout 0
    stop ${worker_pids[@]+"${worker_pids[@]}"}
    apns_workers "$scheduling" "$config-slow" "https://127.0.0.1:$slow_apns_port"
    phase "$config" slow --flood app-a --flood app-b --seconds "$slow_seconds" --drain-timeout 0
    stop ${worker_pids[@]+"${worker_pids[@]}"} "$api_pid"
done
elapsed=$(( $(date +%s) - started_at ))

python3 scripts/lib/fairness_report.py "$out" --command "scripts/bench-fairness.sh --seconds $seconds --fanout-devices $fanout_devices --workers $workers --worker-concurrency $concurrency${worker_args:+ --worker-args '$worker_args'}" \
    --elapsed "$elapsed" --binary "$bin" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "==> $out/summary.txt, $out/report.html"
