#!/usr/bin/env bash
# Runs the Swift Testing suites with every process's wall clock moved ahead (a year by default):
# the test process, the redis-servers and `richpush` processes it starts, and what they start.
# A test that passes today and fails here depends on the calendar (a fixture with absolute expiry
# times, a certificate or token made once and checked in, a date written into a test): fix the
# test, not this check. scripts/test.sh runs it after the suites (CI included).
#
# The clock moves through scripts/lib/clock_offset.c, preloaded (LD_PRELOAD) with
# RICHPUSH_CLOCK_OFFSET seconds; monotonic clocks are untouched. Debian's libfaketime cannot be
# used: it aborts redis-server at start (its jemalloc reads the clock while libfaketime
# initialises).
#
#   scripts/test-clock-ahead.sh                  # 366 days ahead, the suites below
#   scripts/test-clock-ahead.sh --days -30       # or behind
#   scripts/test-clock-ahead.sh --filter 'UpgradeTests'
#
# By default every unit suite but HiredisTests (the Redis client, no dates), and of EndToEndTests
# the suites whose code reads the calendar (the upgrade fixture's expiries, sendAt, ttl, webhook
# signatures, provider tokens, holds and ledgers): the other end-to-end suites are the same code
# paths under load. A full run a year ahead passed on 2026-12-06 (737 tests, 125 s on 2 idle
# cores). ConsoleTimelineTests and RedisACLTests were left out while a console session was
# refused on its second request under load (3 of 7 runs): URLSession's shared cookie storage sent
# another suite's session; they call the console without a cookie jar now (ConsoleHTTP).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

days=366
filter='^(RichPushAPNSTests|RichPushAPNSSimTests|RichPushFCMTests|RichPushFCMSimTests|RichPushWebPushTests|RichPushCoreTests|RichPushAppsTests|RichPushAPITests|RichPushQueueTests|RichPushWorkerTests|RichPushTemplatesTests|RichPushReportTests|DeploymentTests)\.|^EndToEndTests\.(UpgradeTests|ScheduledSendTests|NativeFleetTests|WebhookSignatureTests|DeliveryOptionsFlowTests|WebPushFleetTests|AppCredentialReloadTests|DeliveryLedgerTests|ProviderStateStoreTests|ConsoleTimelineTests|RedisACLTests)/'
skip='^$'
while [ $# -gt 0 ]; do
    case $1 in
        --days) days=${2:?--days needs a number}; shift 2 ;;
        --filter) filter=${2:?--filter needs a regular expression}; skip='^$'; shift 2 ;;
        -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $days =~ ^-?[0-9]+$ ]] || { echo "error: --days must be a whole number of days, not '$days'" >&2; exit 2; }

private_tmp clock-ahead
bin=${RICHPUSH_BIN:-$(swift build --show-bin-path)/richpush}
tests="$(dirname "$bin")/RichPushPackageTests.xctest"
[ -x "$tests" ] || { echo "error: no test binary at $tests (run swift build --build-tests first)" >&2; exit 2; }

# The toolchain's clang: every machine with Swift has it (a plain cc may not be installed).
clang=$(dirname "$(command -v swift)")/clang
[ -x "$clang" ] || clang=$(command -v clang || command -v cc) || { echo "error: no C compiler (clang) found" >&2; exit 2; }
shim="$TMPDIR/libclock_offset.so"
"$clang" -Wall -Werror -O2 -shared -fPIC -o "$shim" scripts/lib/clock_offset.c

offset=$((days * 86400))
# The check must not pass because the clock did not move: measure it through the shim first.
real=$(date +%s)
moved=$(LD_PRELOAD="$shim" RICHPUSH_CLOCK_OFFSET=$offset date +%s)
if [ $((moved - real - offset)) -gt 60 ] || [ $((moved - real - offset)) -lt -60 ]; then
    echo "error: the preloaded clock moved by $((moved - real)) s, not $offset s" >&2
    exit 1
fi
echo "==> the suites with the clock at $(LD_PRELOAD="$shim" RICHPUSH_CLOCK_OFFSET=$offset date -u +%Y-%m-%dT%H:%M:%SZ) ($days days ahead)"
LD_PRELOAD="$shim" RICHPUSH_CLOCK_OFFSET=$offset RICHPUSH_BIN="$bin" \
    "$tests" --testing-library swift-testing --filter "$filter" --skip "$skip"
