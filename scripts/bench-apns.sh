#!/usr/bin/env bash
# Benchmark (not a test): pushes per second through the APNs adapter to a local apns-sim over TLS
# and HTTP/2 on loopback (both in one process), with a private redis-server for the shared token.
# Usage: scripts/bench-apns.sh [--pushes N (100000)] [--batch B (1000)] [--max-streams S (500)]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config python3
ensure_swift
private_tmp bench
richpush_binary
work=$(mktemp -d "$TMPDIR/apns-XXXX")
trap 'kill_private_redis "$work"' EXIT
port=$(free_port)
start_private_redis "$work/redis" "$port"
"$bin" bench apns --redis-url "redis://127.0.0.1:$port/0" "$@"
