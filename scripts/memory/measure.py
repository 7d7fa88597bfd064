"""scripts/redis-memory.sh: Redis memory per installation and per notification, measured.

Starts Redis, one API, one worker and one device simulator (the chaos run's parts, see
scripts/chaos/cluster.py), then reads `used_memory` (INFO memory) around each step: registering
the devices, and creating notifications through the HTTP API that are pushed, fetched and
displayed. Everything a notification leaves in Redis within its retention is counted: record,
payload, status, per-device entries, ledger, fetch and receipt sets, the job's stream entry.
"""
import argparse
import base64
import http.client
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "chaos"))
from cluster import Cluster  # noqa: E402


def used_memory(cluster):
    cluster.redis_cli("MEMORY", "PURGE")
    info = cluster.redis_cli("INFO", "memory").decode()
    return int(next(line.split(":")[1] for line in info.splitlines() if line.startswith("used_memory:")))


def commands(cluster):
    """Calls per command so far (INFO commandstats). Redis counts the commands a script runs as
    well as the EVALSHA: both are reported, as sent by clients and as run by Redis."""
    info = cluster.redis_cli("INFO", "commandstats").decode()
    return {line.split(":")[0][len("cmdstat_"):]: int(line.split("calls=")[1].split(",")[0])
            for line in info.splitlines() if line.startswith("cmdstat_")}


def key_count(cluster):
    return cluster.redis_cli("DBSIZE")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--notifications", type=int, default=5000)
    parser.add_argument("--per-notification", type=int, default=10, help="devices each notification reaches")
    args = parser.parse_args()
    if args.devices < args.per_notification or args.notifications < 1 or args.per_notification < 1:
        parser.error("need --devices >= --per-notification >= 1 and --notifications >= 1")
    groups = args.devices // args.per_notification
    cluster = Cluster(args.binary, args.workdir, api_replicas=1, workers=1, simulators=1, devices=args.devices, groups=groups)
    try:
        cluster.start_redis()
        cluster.add_users()
        cluster.start_api(0)
        cluster.start_worker()
        before_devices, keys_before = used_memory(cluster), key_count(cluster)
        cluster.start_sim(0, timeout=120)
        after_devices, keys_devices = used_memory(cluster), key_count(cluster)
        commands_before = commands(cluster)
        token = base64.b64encode(f"{cluster.admin}:{cluster.password}".encode()).decode()
        connection = http.client.HTTPConnection("127.0.0.1", cluster.api_ports[0], timeout=10)
        for index in range(args.notifications):
            body = json.dumps({"message": f"memory {index}", "richType": "text", "payload": f"payload {index}",
                               "target": f"g{index % groups}"})
            connection.request("POST", "/api/notifications", body=body,
                               headers={"Authorization": f"Basic {token}", "Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            if response.status != 202:
                raise RuntimeError(f"create answered {response.status}")
        expected = args.notifications * args.per_notification
        deadline = time.time() + 300
        while time.time() < deadline:
            with open(cluster.sims[0].stdout_path) as out:
                shown = out.read().count('"event":"alert"')
            if shown >= expected:
                break
            time.sleep(1)
        time.sleep(2)  # the last receipts
        after = commands(cluster)
        spent = {name: calls - commands_before.get(name, 0) for name, calls in after.items() if calls > commands_before.get(name, 0)}
        after_notifications, keys_notifications = used_memory(cluster), key_count(cluster)
    finally:
        cluster.stop()
    per_device = (after_devices - before_devices) / args.devices
    per_notification = (after_notifications - after_devices) / args.notifications
    print(f"installations: {args.devices}, {(keys_devices - keys_before) / args.devices:.2f} keys and "
          f"{per_device:,.0f} bytes each (used_memory {before_devices:,} -> {after_devices:,})")
    print(f"notifications: {args.notifications} to {args.per_notification} devices each (pushed, fetched, displayed), "
          f"{(keys_notifications - keys_devices) / args.notifications:.2f} keys and {per_notification:,.0f} bytes each "
          f"(used_memory {after_devices:,} -> {after_notifications:,})")
    total = sum(spent.values())
    print(f"Redis commands run: {total / args.notifications:.1f} per notification, {total / expected:.2f} per push "
          f"(create, push, fetch and receipt, workers' reads and maintenance, the simulator; INFO commandstats, "
          f"commands inside scripts included)")
    for name, calls in sorted(spent.items(), key=lambda item: -item[1])[:12]:
        print(f"    {name:<22} {calls / args.notifications:8.2f} per notification")
    return 0


if __name__ == "__main__":
    sys.exit(main())
