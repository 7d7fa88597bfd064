#!/usr/bin/env bash
# Starts or stops local `richpush worker` processes until N run, then shows how the work spreads
# (the consumers and what each holds, from `richpush stats`). Stopping sends SIGTERM: a worker
# finishes its running jobs, acknowledges them and leaves, so scaling down loses nothing.
# Usage: scripts/scale-workers.sh N [worker options...]   (Redis from RICHPUSH_REDIS_URL)
#        scripts/scale-workers.sh status [--queue-prefix P]
# The workers' pid files and logs are in RICHPUSH_WORKERS_DIR (default .tmp/workers); queue
# options among the worker options (--queue-prefix, --queue-partition) also apply to the stats.
# RICHPUSH_WORKER_BIN: the executable whose `worker` runs (default: RICHPUSH_BIN, the richpush
# binary); the queue's tests give richpush-bench, whose worker also runs their probe jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

state="${RICHPUSH_WORKERS_DIR:-$PWD/.tmp/workers}"
mkdir -p "$state"
bin="${RICHPUSH_BIN:-$(swift build -c release --show-bin-path 2>/dev/null)/richpush}"
[ -x "$bin" ] || build_release
worker_bin="${RICHPUSH_WORKER_BIN:-$bin}"

running() { # prints the numbers of the workers whose process is alive
    for file in "$state"/local-*.pid; do
        [ -e "$file" ] || continue
        local pid n
        pid=$(cat "$file"); n=${file##*/local-}; n=${n%.pid}
        if kill -0 "$pid" 2>/dev/null; then echo "$n"; else rm -f "$file"; fi
    done | sort -n
}

queue_options() { # the queue-naming options among "$@", for `richpush stats`
    while [ $# -gt 0 ]; do
        case "$1" in
            --queue-prefix|--queue-partition) printf '%s\n%s\n' "$1" "$2"; shift 2 ;;
            --queue-prefix=*|--queue-partition=*) printf '%s\n' "$1"; shift ;;
            *) shift ;;
        esac
    done
}

if [ "${1:-}" = status ] || [ $# -eq 0 ]; then
    [ $# -gt 0 ] && shift
    mapfile -t stats_options < <(queue_options "$@")
    echo "running locally: $(running | wc -l) worker(s)"
    "$bin" stats "${stats_options[@]}"
    exit 0
fi
target=$1
shift
mapfile -t stats_options < <(queue_options "$@")
[[ "$target" =~ ^[0-9]+$ ]] || { echo "error: N must be a number of workers, got '$target'" >&2; exit 2; }

count=$(running | wc -l)
if [ "$count" -lt "$target" ]; then
    last=$(running | tail -n 1)
    next=$(( ${last:-0} + 1 ))
    while [ "$(running | wc -l)" -lt "$target" ]; do
        nohup "$worker_bin" worker --consumer "$(hostname):local-$next" "$@" >"$state/local-$next.log" 2>&1 &
        echo $! > "$state/local-$next.pid"
        echo "started worker local-$next (pid $!, log $state/local-$next.log)"
        next=$((next + 1))
    done
elif [ "$count" -gt "$target" ]; then
    for n in $(running | sort -rn | head -n $(( count - target ))); do
        pid=$(cat "$state/local-$n.pid")
        kill -TERM "$pid"
        for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then echo "worker local-$n still draining after 30 s (pid $pid)" >&2; else echo "stopped worker local-$n"; fi
        rm -f "$state/local-$n.pid"
    done
fi
sleep 1
echo "running locally: $(running | wc -l) worker(s)"
"$bin" stats "${stats_options[@]}"
