"""What the NH stage's scripts share: each check printed as it is made, the failures kept, and
the exit status they make; a simulator's JSON-lines log read."""

import json
import sys

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def finish():
    """Exits 1 when any check failed."""
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


def json_lines(path, keep=lambda entry: True):
    """The JSON objects of a simulator's log (one a line; other lines skipped) that `keep` keeps."""
    entries = []
    with open(path) as file:
        for line in file:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if keep(entry):
                entries.append(entry)
    return entries
