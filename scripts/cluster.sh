#!/usr/bin/env bash
# A local Redis Cluster for development and tests: 3 masters and 3 replicas on loopback ports,
# created with `redis-cli --cluster create`, data under DIR, every server stopped by its PID.
# Usage:
#   scripts/cluster.sh start [--dir DIR (.tmp/cluster)] [--node-timeout MS (2000)]
#       prints the seed URL (redis+cluster://…) on its last line; DIR/ports lists the six ports,
#       masters first; DIR/node-N/port and DIR/node-N/redis.pid say which server is where
#   scripts/cluster.sh stop [--dir DIR]
#   scripts/cluster.sh status [--dir DIR]
#   scripts/cluster.sh restart-node --port P [--dir DIR]
#       starts again a node that was stopped or killed (after a failover it rejoins as a replica)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/common.sh

command=${1:-}
[ $# -gt 0 ] && shift
dir=.tmp/cluster
node_timeout=2000
node_port=
while [ $# -gt 0 ]; do
    case "$1" in
        --dir) dir=$2; shift 2 ;;
        --node-timeout) node_timeout=$2; shift 2 ;;
        --port) node_port=$2; shift 2 ;;
        *) echo "unknown option $1 (usage: scripts/cluster.sh start|stop|status|restart-node [--dir DIR] [--node-timeout MS] [--port P])" >&2; exit 2 ;;
    esac
done

# Starts (or starts again, with its nodes.conf) the server of one node directory on its port.
# A replica syncs at once (no repl-diskless-sync-delay: its 5 s wait for more replicas made every
# start, and a restarted node's resync, 5 s longer), and a stopped master does not wait for its
# replicas to catch up (shutdown-on-sigterm now: stop takes every node down at once, and the data
# of a stopped cluster is not kept).
start_node() {
    local node=$1 port=$2
    redis-server --port "$port" --bind 127.0.0.1 --dir "$(cd "$node" && pwd)" --cluster-enabled yes --cluster-config-file nodes.conf \
        --cluster-node-timeout "$node_timeout" --repl-diskless-sync-delay 0 --shutdown-on-sigterm now --appendonly yes --appendfsync everysec --save '' --maxmemory-policy noeviction \
        --daemonize yes --pidfile "$(cd "$node" && pwd)/redis.pid" --logfile "$(cd "$node" && pwd)/redis.log" >/dev/null 2>&1 </dev/null
    for _ in $(seq 1 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    redis-cli -p "$port" ping >/dev/null || { echo "error: the node on port $port did not start; see $node/redis.log" >&2; return 1; }
    # The server that answers must be this node: when another cluster's node (or a test's Redis)
    # took the port first, ours failed to bind and the PING above reached that one.
    [ "$(redis-cli -p "$port" config get dir 2>/dev/null | tail -1)" = "$(cd "$node" && pwd -P)" ] \
        || { echo "error: port $port is another server's; see $node/redis.log" >&2; return 1; }
}

# A port free on 127.0.0.1 whose cluster bus port (port + 10000) is free too, both below the
# kernel's ephemeral range: every other port the tests and scripts take (bind to port 0) and
# every outgoing connection's source port come from that range, so a bus port inside it could
# be taken between this check and the node's bind (a fresh-clone CI run failed so: "Address
# already in use" on the bus port of a node).
cluster_port() {
    python3 - <<'PY'
import random, socket
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
high = max(11000, min(low, 65536) - 10001)
for _ in range(200):
    port = random.randint(10000, high)
    sockets = []
    try:
        for p in (port, port + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", p)); sockets.append(s)
        for s in sockets: s.close()
        print(port); break
    except OSError:
        for s in sockets: s.close()
PY
}

stop() {
    [ -d "$dir" ] || return 0
    for pidfile in "$dir"/node-*/redis.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || true
    done
    for pidfile in "$dir"/node-*/redis.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        for _ in $(seq 1 50); do pid_running "$pid" || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$pidfile"
    done
    # A node whose pidfile is gone (killed mid-write, restarted by hand): its PID by its exact
    # process title, which names its port.
    for portfile in "$dir"/node-*/port; do
        [ -f "$portfile" ] || continue
        for pid in $(pgrep -f "^redis-server 127.0.0.1:$(cat "$portfile") " || true); do kill -9 "$pid" 2>/dev/null || true; done
    done
}

case "$command" in
start)
    ensure_apt_packages redis-server redis-tools python3
    stop
    rm -rf "$dir"
    mkdir -p "$dir"
    ports=()
    for index in 0 1 2 3 4 5; do
        node="$dir/node-$index"
        mkdir -p "$node"
        # A port taken between the check and the bind (another cluster starting) is tried anew.
        started=0
        for _ in 1 2 3 4 5; do
            port=$(cluster_port)
            if start_node "$node" "$port" 2>>"$dir/start-retries.log"; then started=1; break; fi
            rm -f "$node/nodes.conf" "$node/redis.pid"
        done
        [ "$started" = 1 ] || { cat "$dir/start-retries.log" >&2; stop; exit 1; }
        echo "$port" >"$node/port"
        ports+=("$port")
    done
    printf '%s\n' "${ports[@]}" >"$dir/ports"
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") --cluster-replicas 1 --cluster-yes >"$dir/create.log" 2>&1 \
        || { echo "error: redis-cli --cluster create failed; see $dir/create.log" >&2; stop; exit 1; }
    for port in "${ports[@]}"; do
        for _ in $(seq 1 200); do
            redis-cli -p "$port" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
            sleep 0.05
        done
        redis-cli -p "$port" cluster info | grep -q 'cluster_state:ok' || { echo "error: node on port $port is not ok" >&2; stop; exit 1; }
    done
    # Masters first in the ports file (redis-cli makes the first three masters; check, as a test may rely on it).
    masters=$(for port in "${ports[@]}"; do if redis-cli -p "$port" role | head -1 | grep -q master; then echo "$port"; fi; done)
    replicas=$(for port in "${ports[@]}"; do if redis-cli -p "$port" role | head -1 | grep -q slave; then echo "$port"; fi; done)
    printf '%s\n' $masters $replicas >"$dir/ports"
    # Each replica has synced with its master (a replica that never synced is never promoted).
    for port in $replicas; do
        for _ in $(seq 1 400); do
            redis-cli -p "$port" info replication 2>/dev/null | grep -q 'master_link_status:up' && break
            sleep 0.05
        done
        redis-cli -p "$port" info replication | grep -q 'master_link_status:up' || { echo "error: replica on port $port did not sync" >&2; stop; exit 1; }
    done
    echo "cluster of 3 masters ($(echo $masters | tr ' ' ',')) and 3 replicas ($(echo $replicas | tr ' ' ',')); data in $dir"
    echo "redis+cluster://$(for port in $masters; do printf '127.0.0.1:%s,' "$port"; done | sed 's/,$//')"
    ;;
stop)
    stop
    echo "cluster in $dir stopped"
    ;;
restart-node)
    [ -n "$node_port" ] || { echo "restart-node needs --port P" >&2; exit 2; }
    for node in "$dir"/node-*; do
        if [ "$(cat "$node/port" 2>/dev/null)" = "$node_port" ]; then
            if [ -f "$node/redis.pid" ] && pid_running "$(cat "$node/redis.pid")"; then
                echo "the node on port $node_port is running"; exit 0
            fi
            start_node "$node" "$node_port"
            echo "node on port $node_port started again ($(redis-cli -p "$node_port" role | head -1))"
            exit 0
        fi
    done
    echo "no node on port $node_port in $dir" >&2
    exit 1
    ;;
status)
    [ -f "$dir/ports" ] || { echo "no cluster in $dir"; exit 1; }
    for port in $(cat "$dir/ports"); do
        printf '127.0.0.1:%s %s %s\n' "$port" "$(redis-cli -p "$port" role 2>/dev/null | head -1 || echo down)" \
            "$(redis-cli -p "$port" cluster info 2>/dev/null | grep cluster_state | tr -d '\r' || true)"
    done
    ;;
*)
    echo "usage: scripts/cluster.sh start|stop|status|restart-node [--dir DIR] [--node-timeout MS] [--port P]" >&2
    exit 2
    ;;
esac
