#!/usr/bin/env python3
"""Turns the records of scripts/dev/measure-path.sh into the measured path of one notification.

Each process's record lists the functions that ran for the first time since it was armed, with
the time (CLOCK_MONOTONIC, shared by the processes). This script symbolizes them
(llvm-symbolizer, swift demangle), keeps the functions of Sources/, merges the processes in time
order, and groups the run into stops: a stop is one file read for consecutive functions; a stop
in a file already read is a return. Functions that also ran in the idle window (timers, polls)
are counted too (the Redis client runs for the idle polls as for the notification); the files of
which nothing else ran are named apart.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROLES = ("api", "worker", "device")


def read_trace(path):
    events = []
    if not os.path.exists(path):
        return events
    with open(path) as file:
        for line in file:
            parts = line.split()
            if len(parts) == 2:
                events.append((int(parts[0]), parts[1]))
    return events


def symbolize(binary, addresses):
    """Address -> (file, linkage name) of the outermost function at that address."""
    if not addresses:
        return {}
    result = subprocess.run(
        ["llvm-symbolizer", f"--obj={binary}", "--output-style=JSON", "--no-demangle"],
        input="\n".join(addresses) + "\n", capture_output=True, text=True, check=True)
    table = {}
    for line in result.stdout.splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        symbols = entry.get("Symbol") or []
        if symbols:
            outer = symbols[-1]
            table[entry["Address"]] = (outer.get("StartFileName") or outer.get("FileName") or "", outer.get("FunctionName") or "")
    return table


def demangle(names):
    if not names:
        return {}
    result = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names) + "\n",
                            capture_output=True, text=True, check=True)
    return dict(zip(names, result.stdout.splitlines()))


WRAPPERS = re.compile(
    r"^(\(\d+\) )?((await|suspend) resume partial function for |"
    r"(implicit )?closure #\d+ (\([^)]*\) )?in |protocol witness for |merged |"
    r"reabstraction thunk helper from |partial apply for |"
    r"(dispatch|async) thunk of |(static )?)+")


def readable(demangled):
    """`closure #1 in NotificationRoutes.create(_:context:)` -> `create(_:context:)`; a getter -> its
    property; the type's name dropped. None for what no reader looks for (thunks, outlined copies)."""
    text = demangled.replace("@Sendable ", "").replace("@escaping ", "")
    if text.startswith(("outlined ", "value witness", "type metadata", "lazy protocol witness", "associated type",
                        "default argument", "variable initialization expression", "one-time initialization")):
        return None
    while True:
        stripped = WRAPPERS.sub("", text)
        if stripped == text:
            break
        text = stripped
    # Drop what follows the signature (" in ..." for nested, " : Type", " -> ...").
    text = text.split(" in ")[0].split(" : ")[0].strip()
    for accessor in (".getter", ".setter", ".modify", ".didset", ".willset", ".read", ".unsafeMutableAddressor"):
        if text.endswith(accessor):
            text = text[: -len(accessor)]
    text = re.sub(r"<[^<>()]*>", "", text)
    head = text.split("(")[0]
    base = head.split(".")[-1] if "." in head else head
    labels = text[len(head):]
    depth, end = 0, len(labels)
    for index, character in enumerate(labels):
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
            if depth == 0:
                end = index + 1
                break
    return (base + labels[:end]).strip() or None


DECLARED = re.compile(r"^(?!init\b|deinit\b|subscript\b)[a-z][A-Za-z0-9]*(\((_|[A-Za-z0-9]+):([A-Za-z0-9_]+:)*\)|\(\))?$")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--sources", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--write")
    parser.add_argument("--commit", default="")
    arguments = parser.parse_args()
    sources = os.path.realpath(arguments.sources) + "/"

    traces = {}
    for role in ROLES:
        traces[(role, "path")] = read_trace(os.path.join(arguments.work, f"{role}.path.trace"))
        traces[(role, "idle")] = read_trace(os.path.join(arguments.work, f"{role}.idle.trace"))
    addresses = sorted({address for events in traces.values() for _, address in events})
    table = symbolize(arguments.binary, addresses)
    names = demangle(sorted({name for _, name in table.values() if name}))

    def ours(address):
        file, name = table.get(address, ("", ""))
        real = os.path.realpath(file) if file else ""
        if not real.startswith(sources):
            return None
        return real[len(sources):], names.get(name, name)

    idle = set()
    for role in ROLES:
        for _, address in traces[(role, "idle")]:
            found = ours(address)
            if found:
                idle.add(found)
    events = []
    for role in ROLES:
        for nanoseconds, address in traces[(role, "path")]:
            found = ours(address)
            if found:
                events.append((nanoseconds, role, found[0], found[1]))
    events.sort()
    # Everything that ran counts: the Redis client and the worker's poll run with nothing sent
    # too, and are on the path all the same. The files of which every function also ran in the
    # idle window are named apart (the webhook dispatcher's timers, say), for a reader to discount.
    path_files = {event[2] for event in events if (event[2], event[3]) not in idle}
    counted = events
    idle_files = sorted({event[2] for event in events} - path_files)

    stops = []  # [file, role, [names], return-to stop number or None]
    first_stop = {}
    read = set()
    for _, role, file, function in counted:
        name = readable(function)
        # A function is read once: its closures, and its parts after each await (each its own
        # function in the binary, first run when the await resumes), are the same reading.
        if (file, name or function) in read:
            continue
        read.add((file, name or function))
        if stops and stops[-1][0] == file:
            if name:
                stops[-1][2].append(name)
            continue
        stops.append([file, role, [name] if name else [], first_stop.get(file)])
        first_stop.setdefault(file, sum(1 for stop in stops if stop[3] is None))
    files = len(first_stop)
    returns = sum(1 for stop in stops if stop[3] is not None)
    functions = len(read)
    summary = {"files": files, "stops": len(stops), "returns": returns, "functions": functions,
               "filesAlsoIdle": len(idle_files), "commit": arguments.commit}

    lines = [
        "# The path of one notification, measured",
        "",
        "Written by `scripts/dev/measure-path.sh --write` (how it measures: the script's header). One",
        "JSON `POST /api/notifications` of the default app, through the simulated hub, to the device's",
        "`opened` receipt: the functions of `Sources/` that ran for it, in the order they first ran",
        "across the API, the worker and the device simulator. A numbered stop is a file read for the",
        "first time, with the functions read there; `↩ n` is a return to stop n's file for functions",
        "not read yet. A function counts once: its closures and its parts after each await are the",
        "same reading.",
        "",
        f"Measured: **{files} files, {len(stops)} stops, {returns} returns**, {functions} functions"
        + (f" (commit `{arguments.commit}`)" if arguments.commit else "") + ".",
        f"Of these files, {len(idle_files)} ran nothing that did not also run in an equally long window",
        "with nothing sent (listed at the end: the Redis client, which every call takes, and timers).",
        "",
    ]
    by_target = {}
    for file in first_stop:
        by_target[file.split("/")[0]] = by_target.get(file.split("/")[0], 0) + 1
    lines.append("Files by target: " + ", ".join(
        f"{target} {count}" for target, count in sorted(by_target.items(), key=lambda item: (-item[1], item[0]))) + ".")
    lines.append("")
    number = 0
    for file, role, functions_read, back in stops:
        # A declared name in backticks (ArchitecturePathTests finds each in its file); what the
        # compiler made (an init, a defer, a subscript) in plain text.
        shown = ", ".join(f"`{name}`" if DECLARED.match(name) else name.replace("`", "") for name in functions_read)
        if back is None:
            number += 1
            lines.append(f"{number}. `{file}` ({role}): {shown or 'no named function'}")
        else:
            lines.append(f"- ↩ {back}: {shown or 'no named function'} ({role}, in `{file}`)")
    lines += ["", "## Files that ran nothing they do not run idle", ""]
    lines += [f"- `{file}`" for file in idle_files]
    text = "\n".join(lines) + "\n"
    with open(arguments.out, "w") as file:
        file.write(text)
    with open(arguments.json, "w") as file:
        json.dump(summary, file, indent=2)
        file.write("\n")
    if arguments.write:
        with open(arguments.write, "w") as file:
            file.write(text)
    if not counted:
        print("no function of Sources/ in the records: was the binary built with the recorder?", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
