#!/usr/bin/env bash
# Fault injection, bounded and on loopback only: Redis with AOF everysec, 2 API replicas, 3 workers
# and 2 device simulators (200 devices in 20 tag groups) under steady rich-push load through the
# HTTP API (a client that retries 503 and connection errors), while faults are injected on a
# schedule: kill -9 of a worker (a replacement starts), kill -9 of an API replica (restarted),
# Redis SIGSTOP/SIGCONT, Redis restart, Redis kill -9 (restart from the AOF), simulator kill -9 and
# restart, FCM's project quota used up for --provider-hold seconds (every other device is an Android
# phone reached through `richpush fcm-sim`); every kind at least once, then random kinds. At the end every acknowledged notification
# is reconciled with what each device received (see scripts/chaos/reconcile.py); exit 1 on any
# loss while online or any duplicate. Report: .tmp/chaos/run-*/chaos-report.json.
# With --cluster: on a local Redis Cluster (scripts/cluster.sh: 3 masters, 3 replicas, 6 queue
# partitions, the API with --durability replicated), whose faults are a master's kill -9 (its replica
# takes over; the node comes back as a replica) and a master's SIGSTOP shorter than the node timeout.
# Usage: scripts/chaos.sh [--duration S (90)] [--rate N/s (40)] [--devices M (200)] [--groups G (20)]
#                         [--fault-every S (10)] [--seed N] [--provider-hold S (30)] [--cluster [--partitions P (6)]]
#                         [--provider-faults PCT (0)]
# --provider-faults PCT: the devices are iPhones, Android phones and browsers in turn, reached
# through `richpush apns-sim`, `fcm-sim` and `webpush-sim`, each answering PCT% of valid requests
# with a transient error (429, 500, 503); also exit 1 on any Web Push request inside a
# Retry-After window webpush-sim gave.
# RICHPUSH_BIN=path uses that binary instead of building release.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config python3
ensure_swift
private_tmp chaos
work=$(mktemp -d "$TMPDIR/run-XXXX")
richpush_binary
# The Python harness starts every process itself (Redis in the foreground, no daemon) and stops
# each by PID when it ends, however it ends.
exec python3 scripts/chaos/run.py --binary "$bin" --workdir "$work" "$@"
