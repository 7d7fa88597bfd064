#!/usr/bin/env python3
"""Writes every key of a running Redis as JSON: its name, its time to live in milliseconds as it
is now (-1: none) and its DUMP (hex). A test restores them with RESTORE and that relative time to
live, so the data keeps its expiries on any date (a dump.rdb keeps absolute expiry times, and
every key with one is gone once those times pass).

Usage: redis_keys.py PORT > keys.json  (standard library only; the RESP client is the chaos
run's, scripts/chaos/procs.py)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chaos"))
from procs import redis_call  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: redis_keys.py PORT > keys.json")
    port = int(sys.argv[1])
    names, cursor = [], "0"
    while True:
        cursor, batch = redis_call(port, "SCAN", cursor, "COUNT", 1000)
        names.extend(batch)
        cursor = cursor.decode()
        if cursor == "0":
            break
    keys = []
    for name in sorted(set(names)):
        dump = redis_call(port, "DUMP", name)
        if dump is None:
            continue  # expired between SCAN and DUMP
        keys.append({"key": name.decode(), "pttl": redis_call(port, "PTTL", name), "dump": dump.hex()})
    json.dump({"keys": keys}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
