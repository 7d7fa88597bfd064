"""What scripts/nh/clients.py and scripts/nh/delivery.py share: each check printed as it is
made, the failures kept, and the exit status they make."""

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
