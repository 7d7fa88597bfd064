#!/usr/bin/env bash
# Measures Redis memory per installation and per notification (docs/redis-keys.md quotes it):
# a private Redis, one API, one worker and one device simulator; N devices register, then M
# notifications to K devices each are pushed, fetched and displayed. Stops what it started.
# Usage: scripts/redis-memory.sh [--devices N (1000)] [--notifications M (5000)] [--per-notification K (10)]
# RICHPUSH_BIN=path uses that binary instead of building release.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config python3
ensure_swift
private_tmp memory
richpush_binary
work=$(mktemp -d "$TMPDIR/run-XXXX")
exec python3 scripts/memory/measure.py --binary "$bin" --workdir "$work" "$@"
