#!/usr/bin/env bash
# Benchmark (not a test): webhook delivery, events/s from the outbox to a receiver on loopback
# (one dispatcher, as in each worker; the receiver checks every signature), on a private
# redis-server. Usage: scripts/bench-webhooks.sh [--events N] [--per-entry K] [--concurrency C]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config
ensure_swift
private_tmp bench-webhooks

richpush_binary
bench_binary

bench_redis

"$bench_bin" webhooks --redis-url "$url" "$@"
