#!/usr/bin/env bash
# Benchmark (not a test): the Redis time a worker's round spends claiming its devices and releasing
# them (one request to a device in flight in the fleet: docs/provider-back-pressure.md), per
# device, on a private redis-server, from Redis's own command statistics. Three runs.
# Usage: scripts/bench-device-claims.sh [ROUNDS (200)] [DEVICES (1000)]   (RICHPUSH_BIN: a built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

rounds=${1:-200}
devices=${2:-1000}
ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config
ensure_swift
private_tmp bench

richpush_binary
bench_binary

bench_redis
for run in 1 2 3; do
    echo "run $run: $("$bench_bin" device-claims --redis-url "$url" --rounds "$rounds" --devices "$devices")"
done
