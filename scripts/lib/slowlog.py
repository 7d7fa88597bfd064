"""Summarises the SLOWLOG of a profiled load test (scripts/loadtest.sh --profile).

Reads one or more `redis-cli --json slowlog get -1` arrays (one per master) from stdin; argv[1] is
the number of notifications. Prints, by command (a script by its SHA1 prefix and key count), the
calls and the Redis time per call and per notification, busiest first. A script's time includes
the commands it ran, which SLOWLOG lists again under their own names: compare a script's time per
call with its commands' to see what the call itself costs.
"""
import json
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
    entries += chunk

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
