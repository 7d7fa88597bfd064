"""Summarises the SLOWLOG of a profiled load test (scripts/loadtest.sh --profile).

Reads one or more `redis-cli --json slowlog get -1` arrays (one per master) from stdin; argv[1] is
the number of notifications. Prints, by command (a script by its SHA1 prefix and key count), the
calls and the Redis time per call and per notification, busiest first. A script's time includes
the commands it ran, which SLOWLOG lists again under their own names: compare a script's time per
call with its commands' to see what the call itself costs. Then the commands each script ran per
notification, and the commands sent on their own by the shape of their key.
"""
import json
import re
import sys

notifications = int(sys.argv[1])
decoder = json.JSONDecoder()
text = sys.stdin.read()
entries = []
position = 0
while position < len(text):
    while position < len(text) and text[position].isspace():
        position += 1
    if position >= len(text):
        break
    chunk, position = decoder.raw_decode(text, position)
    # The SLOWLOG RESET that started the log is logged once it ran (it timed the clearing of
    # everything before it): it is not the notifications' work.
    entries += [entry for entry in chunk if not (entry[3] and entry[3][0].lower() == "slowlog")]

calls = {}
for entry in entries:  # [id, time, µs, args, client, name]
    micros, args = entry[2], entry[3]
    name = args[0].lower() if args else "?"
    if name in ("evalsha", "eval") and len(args) > 2:
        name = f"{name} {args[1][:8]} ({args[2]} keys)"
    count, total = calls.get(name, (0, 0))
    calls[name] = (count + 1, total + micros)

print(f"==> SLOWLOG: {len(entries):,} entries; Redis time by command (µs):")
for name, (count, total) in sorted(calls.items(), key=lambda item: -item[1][1])[:16]:
    print(f"    {name:32s} calls {count:9,}  per call {total / count:7.1f}  per notification {total / notifications:7.2f}")

# What each script runs: the commands a script runs are logged (by the scripting client, `?:0`)
# in the order they ran, just before the script itself.
pending, inside, alone = [], {}, {}
for entry in sorted(entries, key=lambda entry: entry[0]):
    args, client = entry[3], entry[4]
    name = args[0].lower() if args else "?"
    if client == "?:0":
        pending.append(name)
    elif name in ("evalsha", "eval", "fcall") and len(args) > 2:
        script = f"{name} {args[1][:8]}"
        count, commands = inside.get(script, (0, {}))
        for command in pending:
            commands[command] = commands.get(command, 0) + 1
        inside[script] = (count + 1, commands)
        pending = []
    else:
        pending = []
        # By command and the shape of its key (hex ids as `H`, digits as `N`): which store sent it.
        shape = name + (" " + re.sub(r"[0-9]+", "N", re.sub(r"[0-9a-f]{16,}", "H", str(args[1]))) if len(args) > 1 else "")
        alone[shape] = alone.get(shape, 0) + 1
print("==> Commands each script ran, per notification (busiest first):")
for script, (count, commands) in sorted(inside.items(), key=lambda item: -sum(item[1][1].values()))[:8]:
    total = sum(commands.values())
    top = ", ".join(f"{command} {n / notifications:.2f}" for command, n in sorted(commands.items(), key=lambda item: -item[1])[:10])
    print(f"    {script:18s} calls {count:8,}  commands {total / notifications:5.2f}: {top}")
print(f"==> Commands sent on their own: {sum(alone.values()) / notifications:.2f} per notification; by key (busiest first):")
for shape, n in sorted(alone.items(), key=lambda item: -item[1])[:8]:
    print(f"    {shape[:60]:60s} per notification {n / notifications:5.2f}")
