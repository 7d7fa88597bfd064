#!/usr/bin/env bash
# Load test (not a test): the full pipeline on this machine. Starts a private redis-server, the
# API, K workers, registers M simulated devices and sends N notifications, one device each.
# --via api (the default) creates them as users do, POST /api/notifications over keep-alive
# connections with an API key; --via api-batch sends them --batch-size (500) to a request with
# POST /api/notifications/batch over the same connections; --via nh sends each as code written for
# Azure Notification Hubs does, an apple native send (the tutorial's silent push) to the device's
# tag on the NH listener (`richpush api --nh-port`, TLS with a certificate made for the run, SAS
# signed with the default hub's connection string); --via nh-batch (with --audience all, at most
# 1000 devices) sends each as a batch direct send to every device's handle; both run with --mode
# silent. --via store writes them straight into Redis (no HTTP). The summary
# gives each process's CPU µs per notification (from /proc) and Redis commands per notification.
# --mode silent counts pushes delivered to devices; --mode rich adds the background fetch and
# the local notification (fire delay 0). Prints throughput, latency percentiles, lost and
# duplicated counts, and every process's peak RSS.
# --audience all sends every notification to every device (N fan-outs of M pushes each).
# Shapes of load: as fast as possible (default), --rate R (constant), --shape ramp --rate R
# (0 up to R per second), --shape burst --burst-size B --burst-interval S.
# --report DIR writes DIR/report.json, DIR/report.html (charts) and DIR/overview.svg.
# --cluster runs it on a local Redis Cluster (scripts/cluster.sh: 3 masters, 3 replicas) with
# --partitions P (default 6 there, 1 on one Redis), and prints the commands each node ran: one
# 2-core machine is not faster with 6 nodes, the figure to read is how evenly the work spreads.
# --profile logs every Redis command in the SLOWLOG and prints the Redis time per call of each
# command and script (scripts/lib/slowlog.py): what a script costs beyond the commands it runs.
# (SLOWLOG on every command costs Redis CPU itself: read the throughput of a run without it.)
# Usage: scripts/loadtest.sh [--notifications N] [--devices M] [--workers K] [--mode silent|rich]
#                            [--audience one|all] [--rate R] [--shape max|constant|ramp|burst]
#                            [--burst-size B] [--burst-interval S] [--report DIR]
#                            [--cluster] [--partitions P] [--via api|api-batch|nh|nh-batch|store] [--connections C]
#                            [--batch-size B] [--profile]
#                            [--api-option OPT]... [--worker-option OPT]...  (passed to richpush api / worker)
# RICHPUSH_BIN=path runs that richpush instead of building release (a before/after comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

notifications=100000 devices=1000 workers=2 mode=silent audience=one cluster=0 partitions= profile=0 via=api
extra=() api_options=() worker_options=()
while [ $# -gt 0 ]; do
    case "$1" in
        --notifications) notifications=$2; shift 2 ;;
        --devices) devices=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --audience) audience=$2; shift 2 ;;
        --via) via=$2; extra+=("$1" "$2"); shift 2 ;;
        --rate|--shape|--burst-size|--burst-interval|--timeout|--connections|--batch-size) extra+=("$1" "$2"); shift 2 ;;
        --report) mkdir -p "$2"; extra+=(--report "$(cd "$2" && pwd)"); shift 2 ;;
        --cluster) cluster=1; shift ;;
        --profile) profile=1; shift ;;
        --api-option) api_options+=("$2"); shift 2 ;;
        --worker-option) worker_options+=("$2"); shift 2 ;;
        --partitions) partitions=$2; shift 2 ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done

ensure_apt_packages redis-server redis-tools libhiredis-dev pkg-config curl openssl
ensure_swift
private_tmp loadtest
work=$(mktemp -d "$TMPDIR/run-XXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    # Gone before this script ends (a worker drains its jobs first).
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    [ "$cluster" = 1 ] && scripts/cluster.sh stop --dir "$work/cluster" >/dev/null
    kill_private_redis "$work"
}
trap cleanup EXIT
# A TERM or INT sent to this script alone (not its process group) ends it through the EXIT trap
# too, which stops what it started; the generator runs in the background for that (bash runs a
# trap only once a foreground command has ended, but at once during a `wait`).
trap 'exit 143' TERM
trap 'exit 130' INT

richpush_binary
if [ "$cluster" = 1 ]; then
    export RICHPUSH_REDIS_URL=$(scripts/cluster.sh start --dir "$work/cluster" | tail -1)
    export RICHPUSH_PARTITIONS=${partitions:-6}
    node_ports=$(cat "$work/cluster/ports")  # masters first
    masters=$(head -3 "$work/cluster/ports")
else
    port=$(free_port)
    start_private_redis "$work/redis" "$port"
    export RICHPUSH_REDIS_URL="redis://127.0.0.1:$port/0"
    export RICHPUSH_PARTITIONS=${partitions:-1}
    node_ports=$port masters=$port
fi
export RICHPUSH_PASSWORD=load-pw
echo "$RICHPUSH_PASSWORD" | "$bin" users add load --role admin --cost 4 >/dev/null
# --via api and api-batch send with an API key, as a server-to-server sender would (the token is the last line).
export RICHPUSH_API_KEY=$("$bin" keys create load --scope send --label loadtest | tail -1)
api_port=$(free_port)
nh_options=()
case "$via" in
    nh|nh-batch)
        # The default app as NH hub "default": its rules sealed with a key made for the run, and the
        # listener's certificate, which the generator checks.
        "$bin" apps new-kek >"$work/kek"
        export RICHPUSH_KEK_FILE="$work/kek"
        "$bin" apps nh-rules default --defaults >/dev/null
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/nh-key.pem" -out "$work/nh-cert.pem" \
            -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
        nh_port=$(free_port)
        nh_options=(--nh-port "$nh_port" --nh-tls-cert-file "$work/nh-cert.pem" --nh-tls-key-file "$work/nh-key.pem")
        extra+=(--nh-ca-file "$work/nh-cert.pem" --nh-hub default)
        export RICHPUSH_NH_CONNECTION_STRING=$("$bin" apps connection-string default --endpoint "sb://127.0.0.1:$nh_port/")
        ;;
esac
# One user drives the whole load: its quotas are off (they guard a shared service from one tenant).
"$bin" api --port "$api_port" --log-level warning --quota-notifications-per-minute 0 --quota-payload-bytes 0 --quota-registrations 0 --quota-tags 0 --bcrypt-cost 4 ${nh_options[@]+"${nh_options[@]}"} ${api_options[@]+"${api_options[@]}"} 2>"$work/api.log" & pids+=($!)
api_pid=$!
worker_pids=()
for i in $(seq 1 "$workers"); do
    "$bin" worker --consumer "load-$i" --concurrency 64 --batch-size 128 --log-level warning ${worker_options[@]+"${worker_options[@]}"} 2>"$work/worker-$i.log" & pids+=($!)
    worker_pids+=($!)
done
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$api_port/health/ready" >/dev/null && break; sleep 0.1; done

watch=(--watch-pid "api=$api_pid")
if [ "$cluster" = 1 ]; then
    for index in 0 1 2 3 4 5; do
        node_port=$(cat "$work/cluster/node-$index/port")
        watch+=(--watch-pid "redis-$node_port=$(cat "$work/cluster/node-$index/redis.pid")")
    done
else
    watch+=(--watch-pid "redis=$(cat "$work/redis/redis.pid")")
fi
for i in "${!worker_pids[@]}"; do watch+=(--watch-pid "worker-$((i + 1))=${worker_pids[$i]}"); done

where="one Redis"
[ "$cluster" = 1 ] && where="Redis Cluster (masters $(echo $masters | tr ' ' ','))"
echo "==> $notifications notifications to $devices devices (audience $audience), $workers workers, mode $mode, $where, $RICHPUSH_PARTITIONS partition(s) ${extra[*]}"
if [ "$profile" = 1 ]; then
    # Every command into the SLOWLOG (its duration in µs, commands run by scripts too): what each
    # script costs per call, which INFO commandstats cannot tell apart. (The log and the counts
    # start over once the devices are registered: --reset-stats-at below.)
    for node_port in $masters; do
        redis-cli -p "$node_port" config set slowlog-log-slower-than 0 >/dev/null
        redis-cli -p "$node_port" config set slowlog-max-len 10000000 >/dev/null
    done
fi
# Redis's statistics start over once the devices are registered: the counts are the notifications'.
resets=()
for node_port in $node_ports; do resets+=(--reset-stats-at "redis://127.0.0.1:$node_port/0"); done
"$bin" loadtest --api "http://127.0.0.1:$api_port" --user load --notifications "$notifications" --devices "$devices" \
    --mode "$mode" --audience "$audience" --workers "$workers" "${watch[@]}" "${resets[@]}" "${extra[@]}" & pids+=($!)
wait $!
# Redis commands per notification (INFO commandstats; commands run inside scripts count too, and
# the simulator's own commands are included, the device registrations not), and on a cluster per
# node: the masters' spread (busiest / quietest) says whether the partitions share the work.
for node_port in $node_ports; do
    echo "node $node_port $(echo "$masters" | grep -qx "$node_port" && echo master || echo replica)"
    redis-cli -p "$node_port" info commandstats
done | python3 scripts/lib/commandstats.py "$notifications"
if [ "$profile" = 1 ]; then
    for node_port in $masters; do redis-cli -p "$node_port" --json slowlog get -1; done | python3 scripts/lib/slowlog.py "$notifications"
fi
