# Shared by the scripts in scripts/: dependency installation and cleanup of private Redis servers.
# Source it; it defines functions only.

# ensure_apt_packages PKG...: installs the Debian/Ubuntu packages that are missing, saying which.
ensure_apt_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if ! command -v apt-get >/dev/null; then
        echo "error: missing packages ${missing[*]} and no apt-get to install them; install them by hand" >&2
        return 1
    fi
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "==> installing ${missing[*]} (apt-get)"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ensure_swift: fails with a clear message when no Swift 6 toolchain is on PATH.
ensure_swift() {
    if ! command -v swift >/dev/null; then
        [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null || { echo "error: swift is not on PATH; install Swift 6.1+ from swift.org" >&2; return 1; }
}

# kill_private_redis DIR: kills every redis-server whose pid file lies under DIR (tests start them there).
# Name the run's own directory, never a shared parent: a run next to it (another load test) has its
# redis-servers under the same parent.
kill_private_redis() {
    local dir=$1
    [ -d "$dir" ] || return 0
    find "$dir" -maxdepth 4 -name 'redis.pid' 2>/dev/null | while read -r pidfile; do
        kill -9 "$(cat "$pidfile")" 2>/dev/null || true
    done
}

# bench_redis: a private redis-server for a benchmark, on a free port in a fresh directory under
# $TMPDIR: sets $dir, $port and $url, and stops it (by its pid file) and removes the directory at
# exit. A script with more to stop at exit sets its own trap and calls stop_bench_redis from it.
bench_redis() {
    dir=$(mktemp -d "$TMPDIR/redis-XXXX")
    port=$(free_port)
    url="redis://127.0.0.1:$port/0"
    trap stop_bench_redis EXIT
    start_private_redis "$dir" "$port"
}
stop_bench_redis() {
    kill_private_redis "$dir"
    rm -rf "$dir"
}

# pid_running PID: whether PID runs and is not a zombie. A daemon (redis-server --daemonize) is
# init's child once its starter exits, and a container's init may reap it seconds after it ended:
# `kill -0` says a zombie is alive.
pid_running() {
    local state
    state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# free_port: prints a TCP port that is free on 127.0.0.1 right now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_private_redis DIR PORT [ARGS...]: starts a redis-server on 127.0.0.1:PORT with its files in DIR.
start_private_redis() {
    local dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
        --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" "$@" >/dev/null
    for _ in $(seq 1 200); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    echo "error: redis-server on port $port did not start; see $dir/redis.log" >&2
    return 1
}

# build_release: builds the richpush binary (release) once and sets $bin to its path.
build_release() {
    echo "==> building release"
    swift build -c release --product richpush >/dev/null
    bin="$(swift build -c release --show-bin-path)/richpush"
}

# bench_binary: sets $bench_bin to $RICHPUSH_BENCH_BIN when given, else to the richpush-bench
# beside $bin (call richpush_binary first), building it (release) when $bin is the release build
# and it is missing. richpush-bench is the benchmarks' executable: `worker` and `api` as richpush
# runs them plus the probe and noop job types and GET /bench/hello, and the `bench` measurements.
bench_binary() {
    if [ -n "${RICHPUSH_BENCH_BIN:-}" ]; then
        bench_bin=$RICHPUSH_BENCH_BIN
    else
        bench_bin="$(dirname "$bin")/richpush-bench"
        if [ "$(dirname "$bin")" = "$(swift build -c release --show-bin-path 2>/dev/null)" ]; then
            swift build -c release --product richpush-bench >/dev/null
        fi
    fi
    [ -x "$bench_bin" ] || {
        echo "error: no richpush-bench binary at $bench_bin (swift build --product richpush-bench, or set RICHPUSH_BENCH_BIN)" >&2
        return 2
    }
    bench_bin="$(cd "$(dirname "$bench_bin")" && pwd)/$(basename "$bench_bin")"
}

# richpush_binary: sets $bin to $RICHPUSH_BIN when given, else builds release; fails clearly
# when there is no executable there.
richpush_binary() {
    if [ -n "${RICHPUSH_BIN:-}" ]; then bin=$RICHPUSH_BIN; else build_release; fi
    [ -x "$bin" ] || { echo "error: no richpush binary at $bin" >&2; return 2; }
    # Absolute: the harnesses start processes in their own working directories.
    bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
}

# ensure_venv DIR PIN...: a virtualenv at DIR holding exactly PIN... (pip requirements), made
# once and reused while the pins are the same. Kept outside the clone, so a fresh clone (CI)
# reuses it instead of installing it again.
ensure_venv() {
    local dir=$1
    shift
    [ "$(cat "$dir/.pins" 2>/dev/null)" = "$*" ] && return 0
    # Debian's python3 has venv and ensurepip in a package of their own.
    python3 -c 'import ensurepip, venv' 2>/dev/null || ensure_apt_packages python3-venv
    echo "==> installing $* into $dir"
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
    echo "$*" >"$dir/.pins"
}

# browser_venv: sets $venv to the browser tests' virtualenv (Selenium, outside the clone, shared by
# scripts/test-browser.sh and scripts/test-console.sh; RICHPUSH_BROWSER_VENV moves it), made once.
browser_venv() {
    venv="${RICHPUSH_BROWSER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/richpush/browser-venv}"
    ensure_venv "$venv" "selenium==4.51.0"
}

# private_tmp NAME: keeps SwiftPM's and our temporary files under .tmp/NAME, where cleanup finds them.
private_tmp() {
    export TMPDIR="$PWD/.tmp/$1"
    mkdir -p "$TMPDIR"
}

# processes_under DIR: prints "PID command" for every live process whose working directory or
# command line lies under DIR (what a script started there and left behind).
processes_under() {
    local dir
    dir=$(cd "$1" 2>/dev/null && pwd) || return 0
    for proc in /proc/[0-9]*; do
        local pid=${proc#/proc/}
        [ "$pid" = "$$" ] && continue
        local cwd cmd
        cwd=$(readlink "$proc/cwd" 2>/dev/null) || continue
        cmd=$(tr '\0' ' ' <"$proc/cmdline" 2>/dev/null) || continue
        case "$cwd/ $cmd" in
            "$dir"/*|*" $dir"/*|*"=$dir"/*) echo "$pid $cmd" ;;
        esac
    done
}

# assert_nothing_left NAME DIR: fails, naming them, if processes started under DIR outlived
# the script NAME that started them (every script must stop exactly what it started).
assert_nothing_left() {
    local left
    left=$(processes_under "$2")
    if [ -n "$left" ]; then
        echo "error: $1 left processes running:" >&2
        echo "$left" >&2
        return 1
    fi
    echo "==> $1 left no process behind"
}

# start_pipeline WORK DEVICES HANDLE_PREFIX [API ARGS...]: for benchmarks, the whole pipeline on a
# private redis-server under WORK: user "bench" (password bench-password), the API, two workers and
# one device-sim process with DEVICES devices, given the array `pipeline_device_args` if set (else
# --lenient: every push wakes its app), the workers given `pipeline_worker_args` if set; sets
# `base` to the API's URL. Every PID goes into the
# array `pids`, and an EXIT trap stops them and the redis-server. Needs $bin.
start_pipeline() {
    local work=$1 devices=$2 handle_prefix=$3
    pids=()
    pipeline_work=$work
    trap stop_pipeline EXIT
    shift 3
    local port api_port
    port=$(free_port)
    start_private_redis "$work/redis" "$port"
    export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
    echo "bench-password" | "$bin" users add bench --cost 4 >/dev/null
    api_port=$(free_port)
    "$bin" api --port "$api_port" --log-level warning --quota-notifications-per-minute 0 "$@" 2>"$work/api.log" & pids+=($!)
    base="http://127.0.0.1:$api_port"
    local worker_args=()
    [ -n "${pipeline_worker_args+x}" ] && worker_args=("${pipeline_worker_args[@]}")
    for i in 1 2; do
        "$bin" worker --consumer "w$i" --log-level warning --api-base-url "$base" "${worker_args[@]}" 2>"$work/worker-$i.log" & pids+=($!)
    done
    for _ in $(seq 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
    local device_args=(--lenient)
    [ -n "${pipeline_device_args+x}" ] && device_args=("${pipeline_device_args[@]}")
    RICHPUSH_PASSWORD=bench-password "$bin" device-sim --api "$base" --user bench --devices "$devices" --tap none --fire-delay 0 --format json \
        --handle-prefix "$handle_prefix" "${device_args[@]}" >"$work/device.log" 2>"$work/device.err" & pids+=($!)
    for _ in $(seq 600); do grep -q listening "$work/device.err" 2>/dev/null && break; sleep 0.1; done
}

# stop_pids PID...: sends each process this script started a TERM, then waits for each (a
# worker drains its jobs first); a process already gone is no error. For EXIT traps.
stop_pids() {
    local pid
    for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
    for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
}

# stop_pipeline: stops what start_pipeline started, by PID (its EXIT trap).
stop_pipeline() {
    stop_pids "${pids[@]}"
    kill_private_redis "$pipeline_work"
}
