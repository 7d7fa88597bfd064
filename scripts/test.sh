#!/usr/bin/env bash
# Runs the whole test suite against real redis-servers (the tests start their own on free ports).
# Installs what is missing first: redis-server, redis-tools, libhiredis-dev, openssl (the TLS tests
# check certificates with it), docker-compose to validate docker-compose.yml, and what the later
# stages need (curl, python3, chromium, chromium-driver; apt-get, sudo when not root). Then, side by
# side, the hostile-input, fuzz and fault-injection runs against the debug binary and the browser
# device in headless Chromium (scripts/test-browser.sh installs Selenium): each stage's output
# goes to .tmp/stages/NAME.log, printed whole when the stage ends.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

# Every package the stages install for themselves too, here, before they run side by side: two
# apt-gets at once would fight over dpkg's lock. (ensure_venv installs python3-venv when its
# python3 lacks venv: here too, for the same reason.)
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config docker-compose openssl \
    curl python3 chromium chromium-driver fonts-dejavu-core
python3 -c 'import ensurepip, venv' 2>/dev/null || ensure_apt_packages python3-venv
ensure_swift

# Keep SwiftPM's and the tests' temporary files (and private Redis servers) in one place we clean.
export TMPDIR="$PWD/.tmp/test"
mkdir -p "$TMPDIR"

# stage NAME COMMAND...: runs one stage and notes how long it took (the table at the end).
timings=()
stage() {
    local name=$1 started=$SECONDS
    shift
    echo "==> $name"
    "$@"
    timings+=("$(printf '%6d s  %s' $((SECONDS - started)) "$name")")
}

# The stages after `swift test` run side by side, in lanes: a lane's stages one after another, the
# lanes at once. Each stage runs in a session (and process group) of its own, its output in
# .tmp/stages/ID.log (printed whole when it ends) and its files under .tmp/ID. side_stage defines
# one; side_lanes runs them and notes which failed or left a process behind.
logs=.tmp/stages
declare -A side_name=() side_command=() side_next=() side_started=() side_pid=() side_line=()
side_order=()
side_failed=()
side_stage() { # ID NAME COMMAND... (words without spaces of their own; RICHPUSH_BIN is set)
    local id=$1
    side_name[$id]=$2
    shift 2
    side_command[$id]="$*"
    side_order+=("$id")
}
side_start() { # ID
    local id=$1 argv
    read -ra argv <<<"${side_command[$id]}"
    side_started[$id]=$SECONDS
    # setsid: the stage's pid is its process group's id, so that an interrupted run can stop it
    # and its foreground command at once, as Ctrl-C does to a script run alone.
    setsid env RICHPUSH_BIN="$bin" "${argv[@]}" </dev/null >"$logs/$id.log" 2>&1 &
    side_pid[$id]=$!
    echo "==> started $id: ${side_name[$id]} (pid ${side_pid[$id]}, log $logs/$id.log)"
}
side_lanes() { # "ID ID..." per lane
    local lane ids i pid id status took
    for lane in "$@"; do
        read -ra ids <<<"$lane"
        for ((i = 1; i < ${#ids[@]}; i++)); do side_next[${ids[i - 1]}]=${ids[i]}; done
        side_start "${ids[0]}"
    done
    while [ ${#side_pid[@]} -gt 0 ]; do
        status=0
        pid=""
        wait -n -p pid "${side_pid[@]}" || status=$?
        [ -n "$pid" ] || { echo "error: waiting for the stages failed (status $status)" >&2; return 1; }
        for id in "${!side_pid[@]}"; do [ "${side_pid[$id]}" = "$pid" ] && break; done
        unset "side_pid[$id]"
        took=$((SECONDS - side_started[$id]))
        echo "==> ${side_name[$id]}: its output ($logs/$id.log)"
        cat "$logs/$id.log"
        if [ "$status" -eq 0 ] && assert_nothing_left "the $id stage" ".tmp/$id"; then
            echo "==> $id passed in $took s"
        else
            echo "==> $id FAILED in $took s (exit status $status); its log: $logs/$id.log" >&2
            side_failed+=("$id")
        fi
        side_line[$id]=$(printf '%6d s    %s' "$took" "${side_name[$id]}")
        # The rest of its lane runs even after a failure: one run reports every stage.
        [ -z "${side_next[$id]:-}" ] || side_start "${side_next[$id]}"
    done
}
# On an early exit (Ctrl-C, a signal): TERM to each running stage's process group; each script
# then stops what it started, by pid. After 30 s, KILL and the stage's private redis-servers.
side_stages_stop() {
    [ ${#side_pid[@]} -gt 0 ] || return 0
    local id alive
    for id in "${!side_pid[@]}"; do
        echo "==> stopping $id (pid ${side_pid[$id]}, log $logs/$id.log)" >&2
        kill -TERM -- "-${side_pid[$id]}" 2>/dev/null || true
    done
    for _ in $(seq 1 300); do
        alive=0
        for id in "${!side_pid[@]}"; do kill -0 "${side_pid[$id]}" 2>/dev/null && alive=1; done
        [ "$alive" -eq 0 ] && return 0
        sleep 0.1
    done
    for id in "${!side_pid[@]}"; do
        kill -KILL -- "-${side_pid[$id]}" 2>/dev/null || true
        kill_private_redis ".tmp/$id"
    done
}
trap 'side_stages_stop; kill_private_redis "$TMPDIR"' EXIT
trap 'exit 130' INT TERM

stage "building (debug, with tests)" swift build --build-tests
# The release build is no test: the suite runs the debug binary, the one scripts/demo.sh builds.
# CI (CI=true) and RICHPUSH_TEST_RELEASE=1 build it too, because deployments, the benchmarks and
# `scripts/demo.sh --release` run it and the optimizer can fail where a debug build passes (Swift
# 6.3.1 crashed splitting one async function, session 9); a newcomer's run skips its 300 s.
if [ "${CI:-}" = true ] || [ "${RICHPUSH_TEST_RELEASE:-}" = 1 ]; then
    stage "building the richpush binary (release, as deployments and benchmarks run it; CI only)" swift build -c release --product richpush
fi
stage "testing (swift test)" swift test --skip-build
# The tests' redis-servers and worker processes are stopped by the tests themselves.
assert_nothing_left "swift test" "$TMPDIR"

# Asked once: `swift build --show-bin-path` loads the package (a few seconds), and SwiftPM's lock
# on .build would make the stages wait for each other's calls.
bin="$(swift build --show-bin-path)/richpush"
rm -rf "$logs"
mkdir -p "$logs"
side_block=$SECONDS
# Two lanes of about a minute each. One runs the stages with timing bounds of a second or two
# (security's connection timeouts and login timing, chaos's fault windows), one at a time. The other
# runs the fuzz run, the most CPU of the four with bounds of 7 s and more, at a lower priority
# (nice 5: the cores go to the bounded stages when they want them), then the browser device, whose
# waits allow 30 s.
side_stage fuzz "short fuzz run (scripts/fuzz.sh: schemathesis against openapi.yaml, contract probes, parser fuzz tests)" \
    nice -n 5 env FUZZ_PARSER_ITERATIONS=50000 bash scripts/fuzz.sh --examples 25
side_stage browser "browser device in headless Chromium (scripts/test-browser.sh: /device subscribes, decrypts, fetches, shows, opens the image)" \
    bash scripts/test-browser.sh
side_stage security "hostile-input and authorization suite (scripts/security.sh)" \
    bash scripts/security.sh
side_stage chaos "short fault-injection run (scripts/chaos.sh: 30 s, every fault kind once, reconciled push by push)" \
    bash scripts/chaos.sh --duration 30 --rate 20 --fault-every 4 --seed 1 --provider-hold 10
side_lanes "fuzz browser" "security chaos"
timings+=("$(printf '%6d s  %s' $((SECONDS - side_block)) "after the tests, side by side (fuzz, browser | security, chaos; each stage's own time below):")")
for id in "${side_order[@]}"; do timings+=("${side_line[$id]}"); done

echo "==> stages (wall time, ${SECONDS} s in all)"
printf '%s\n' "${timings[@]}"
if [ ${#side_failed[@]} -gt 0 ]; then
    for id in "${side_failed[@]}"; do echo "error: stage $id failed: ${side_name[$id]}; its log: $logs/$id.log" >&2; done
    exit 1
fi
