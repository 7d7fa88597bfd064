#!/usr/bin/env bash
# Benchmark (not a test): this project's Redis client against redis-benchmark on the same private
# redis-server, for XADD and PUBLISH, one connection, unpipelined (-P 1) and pipelined (-P 64).
# Usage: scripts/bench-redis.sh [REQUESTS]   (default 200000 per measurement; RICHPUSH_BIN: a built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

requests=${1:-200000}
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config
ensure_swift
private_tmp bench

richpush_binary
bench_binary

bench_redis

redis_benchmark_rps() { # PIPELINE COMMAND...
    local pipeline=$1
    shift
    redis-benchmark -p "$port" -c 1 -P "$pipeline" -n "$requests" --csv "$@" | tail -1 | cut -d, -f2 | tr -d '"'
}

# "task": the threads transport (--redis-transport threads), the loop as an ordinary task (a hop to the connection's thread and back per round trip);
# "spin": as "task", with the connection's thread spinning 50 µs for more work before it sleeps;
# "on-thread": the loop runs with the connection as its task executor (no hand-off at all);
# "nio": the SwiftNIO transport (--redis-transport nio), the loop as an ordinary task (a hop to the
# event loop and back per round trip); "nio-on-loop": its loop runs on the connection's event loop.
printf '%-8s %-6s %-12s %14s %14s %7s\n' command pipe mode "richpush op/s" "r-bench op/s" ratio
for command in xadd publish; do
    for pipeline in 1 64; do
        if [ "$command" = xadd ]; then
            args=(XADD bench:redis-benchmark '*' field value)
        else
            args=(PUBLISH bench:channel value)
        fi
        theirs=$(redis_benchmark_rps "$pipeline" "${args[@]}")
        for mode in task spin on-thread nio nio-on-loop; do
            flag=(--redis-transport threads)
            [ "$mode" = spin ] && flag=(--redis-transport threads --idle-spin 50)
            [ "$mode" = on-thread ] && flag=(--redis-transport threads --on-connection-thread)
            [ "$mode" = nio ] && flag=(--redis-transport nio)
            [ "$mode" = nio-on-loop ] && flag=(--redis-transport nio --on-connection-thread)
            ours=$("$bench_bin" redis --redis-url "$url" --command "$command" --pipeline "$pipeline" \
                --requests "$requests" --key "bench:richpush:$command" "${flag[@]}")
            ratio=$(python3 -c "print(f'{$ours / $theirs:.2f}')")
            printf '%-8s %-6s %-12s %14.0f %14.0f %7s\n' "$command" "$pipeline" "$mode" "$ours" "$theirs" "$ratio"
        done
        redis-cli -p "$port" del bench:redis-benchmark bench:richpush:xadd >/dev/null
    done
done
echo "targets: XADD -P 64 ratio >= 0.70; XADD -P 1 ratio >= 0.80"
