#!/usr/bin/env bash
# The operator's front for `richpush replay` and `richpush dlq`. --dry-run shows what would be
# re-sent and changes nothing. A replayed rich push reaches only devices that did not get it,
# unless --force (which clears the selected notifications' delivery ledger entries first).
# Usage:
#   scripts/replay.sh window --from TIME [--to TIME] [--type TYPE] [--force] [--dry-run]
#   scripts/replay.sh notification ID [--from TIME] [--force] [--dry-run]  (default window: 24 h)
#   scripts/replay.sh dead [--dry-run] [DEAD-LETTER-ID...]          (no ids: every dead letter)
# TIME: a stream id, ms since 1970, ISO 8601, or -30s / -15m / -2h. Redis from RICHPUSH_REDIS_URL;
# other richpush options (--queue-prefix P) pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh
bin="${RICHPUSH_BIN:-$(swift build -c release --show-bin-path 2>/dev/null)/richpush}"
[ -x "$bin" ] || build_release

usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# `--from -15m` would read as an option to the CLI's parser: pass times as `--from=-15m`.
joined() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --from|--to) printf '%s\n' "$1=$2"; shift 2 ;;
            *) printf '%s\n' "$1"; shift ;;
        esac
    done
}
[ $# -ge 1 ] || usage
what=$1
shift
case "$what" in
    window)
        mapfile -t args < <(joined "$@")
        exec "$bin" replay "${args[@]}" ;;
    notification)
        [ $# -ge 1 ] && [[ "$1" =~ ^[0-9]+$ ]] || { echo "error: give the notification id (a number)" >&2; usage; }
        id=$1
        shift
        from=-24h
        args=()
        while [ $# -gt 0 ]; do
            case "$1" in
                --from) from=$2; shift 2 ;;
                *) args+=("$1"); shift ;;
            esac
        done
        exec "$bin" replay "--from=$from" --notification "$id" "${args[@]}" ;;
    dead)
        dry=0
        ids=()
        for arg in "$@"; do
            if [ "$arg" = --dry-run ]; then dry=1; else ids+=("$arg"); fi
        done
        if [ "$dry" -eq 1 ]; then
            if [ ${#ids[@]} -eq 0 ]; then exec "$bin" dlq list --count 1000; fi
            for id in "${ids[@]}"; do "$bin" dlq show "$id"; done
            exit 0
        fi
        if [ ${#ids[@]} -eq 0 ]; then exec "$bin" dlq replay --all; fi
        exec "$bin" dlq replay "${ids[@]}" ;;
    *)
        usage ;;
esac
