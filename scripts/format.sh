#!/usr/bin/env bash
# The code's layout, by `swift format` (in the toolchain) with the repository's .swift-format.
# Usage: scripts/format.sh          rewrites Sources, Tests and Package.swift in place
#        scripts/format.sh --check  changes nothing; lists each finding and exits 1 if there is any
#                                   (scripts/test.sh runs this first)
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests Package.swift)
case "${1:-}" in
    --check) exec swift format lint --strict --recursive --parallel "${paths[@]}" ;;
    "") exec swift format format --in-place --recursive --parallel "${paths[@]}" ;;
    *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
