#!/usr/bin/env python3
"""Writes every key of a running Redis as JSON: its name, its time to live in milliseconds as it
is now (-1: none) and its DUMP (hex). A test restores them with RESTORE and that relative time to
live, so the data keeps its expiries on any date (a dump.rdb keeps absolute expiry times, and
every key with one is gone once those times pass).

Usage: redis_keys.py PORT > keys.json  (standard library only)
"""
import json
import socket
import sys


class Redis:
    def __init__(self, port):
        self.socket = socket.create_connection(("127.0.0.1", port))
        self.reader = self.socket.makefile("rb")

    def call(self, *words):
        parts = [b"*%d\r\n" % len(words)]
        for word in words:
            data = word if isinstance(word, bytes) else str(word).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.socket.sendall(b"".join(parts))
        return self.read()

    def read(self):
        line = self.reader.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            length = int(rest)
            if length < 0:
                return None
            data = self.reader.read(length + 2)[:-2]
            return data
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise RuntimeError("unexpected reply %r" % line)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: redis_keys.py PORT > keys.json")
    redis = Redis(int(sys.argv[1]))
    names, cursor = [], "0"
    while True:
        cursor, batch = redis.call("SCAN", cursor, "COUNT", 1000)
        names.extend(batch)
        cursor = cursor.decode()
        if cursor == "0":
            break
    keys = []
    for name in sorted(set(names)):
        dump = redis.call("DUMP", name)
        if dump is None:
            continue  # expired between SCAN and DUMP
        keys.append({"key": name.decode(), "pttl": redis.call("PTTL", name), "dump": dump.hex()})
    json.dump({"keys": keys}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
