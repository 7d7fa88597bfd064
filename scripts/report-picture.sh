#!/usr/bin/env bash
# Regenerates docs/loadtest-report.svg, the load-test picture in docs/load-tests.md, from a real run on
# this machine: a ramp from 0 to 12,000 notifications per second (one device each), past what
# two workers on a 2-core machine deliver, so the picture shows the pipeline saturate and recover.
# The run's full report (report.html, report.json) stays in .tmp/report-picture/.
# Usage: scripts/report-picture.sh [loadtest.sh options that replace the defaults...]
set -euo pipefail
cd "$(dirname "$0")/.."

out=.tmp/report-picture
rm -rf "$out"
mkdir -p "$out" docs
if [ $# -eq 0 ]; then
    set -- --notifications 60000 --devices 1000 --workers 2 --shape ramp --rate 12000
fi
scripts/loadtest.sh "$@" --report "$out"
cp "$out/overview.svg" docs/loadtest-report.svg
echo "==> docs/loadtest-report.svg updated (full report: $out/report.html)"
