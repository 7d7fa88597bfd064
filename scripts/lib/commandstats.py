"""Summarises `INFO commandstats` of one or more Redis nodes for scripts/loadtest.sh.

Reads lines "node PORT master|replica" each followed by that node's INFO commandstats; argv[1]
is the number of notifications. Prints the commands per notification (in total, from the
masters), the busiest commands by calls and by Redis time, and with several masters the calls per
node and the spread.
"""
import os
import sys

notifications = int(sys.argv[1])
nodes = []  # (port, role, {command: calls})
usec = {}  # command: microseconds, on the masters
for line in sys.stdin:
    if line.startswith("node "):
        _, port, role = line.split()
        nodes.append((port, role, {}))
    elif line.startswith("cmdstat_") and nodes:
        name = line.split(":")[0][len("cmdstat_"):]
        # Split on ":calls=": rejected_calls and failed_calls contain "calls=" too.
        nodes[-1][2][name] = int(line.split(":calls=")[1].split(",")[0])
        if nodes[-1][1] == "master":
            usec[name] = usec.get(name, 0) + int(line.split(",usec=")[1].split(",")[0])

masters = [node for node in nodes if node[1] == "master"]
calls = {}
for _, _, stats in masters:
    for name, count in stats.items():
        calls[name] = calls.get(name, 0) + count
top = ", ".join(f"{name} {count / notifications:.2f}" for name, count in sorted(calls.items(), key=lambda item: -item[1])[:int(os.environ.get("COMMANDSTATS_TOP", "8"))])
print(f"==> Redis ran {sum(calls.values()) / notifications:.1f} commands per notification "
      f"({calls.get('evalsha', 0) / notifications:.2f} EVALSHA): {top}")
# Redis 7 times a script's EVALSHA including the commands it ran, and times those commands again.
by_time = ", ".join(f"{name} {micros / notifications:.1f}" for name, micros in sorted(usec.items(), key=lambda item: -item[1])[:int(os.environ.get("COMMANDSTATS_TOP", "8"))])
print(f"==> Redis time per notification by command, µs (a script's includes what it ran): {by_time}")
if len(masters) > 1:
    per_node = [(port, sum(stats.values())) for port, _, stats in masters]
    busiest, quietest = max(count for _, count in per_node), min(count for _, count in per_node)
    print("==> commands per master: " + ", ".join(f"{port} {count:,}" for port, count in per_node)
          + f"; busiest / quietest = {busiest / max(quietest, 1):.2f}")
    replicas = [(port, sum(stats.values())) for port, role, stats in nodes if role == "replica"]
    if replicas:
        print("==> commands per replica (replicated writes): " + ", ".join(f"{port} {count:,}" for port, count in replicas))
