"""Timing (opt-in, SEC_TIMING=1: figures for the notes, too noisy for every run of the suite): does
a 404 for someone else's notification take longer than a 404 for a missing one? Bob asks for
alice's notification and for an id past the newest, interleaved, on one kept-alive connection
(a new connection per request would add its own noise), N times each (SEC_TIMING_SAMPLES, 300),
for the payload, the status and a receipt. Reports the medians and the median of the paired
differences (each request minus its neighbour of the other kind: drift on a busy machine cancels
out); fails when a route's paired difference passes SEC_TIMING_LIMIT_US (40 µs) in each of three
rounds."""
import http.client
import os
import statistics
import time

from harness import HOST, basic

SAMPLES = int(os.environ.get("SEC_TIMING_SAMPLES", "300"))
LIMIT = float(os.environ.get("SEC_TIMING_LIMIT_US", "40")) / 1e6


def timed(connection, method, path, headers, body=None):
    started = time.perf_counter()
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    return time.perf_counter() - started, response.status


def foreign_vs_missing(ctx, t):
    ctx.add_user(t, "timing_owner")
    ctx.add_user(t, "timing_other")
    ids = [int(ctx.sent_id(t, f"timing_owner's notification {n}", ctx.send("timing_owner"))) for n in range(3)]
    foreign, missing = ids[0], ids[-1] + 1_000_000
    headers = {"Authorization": f"Basic {basic('timing_other', ctx.passwords['timing_other'])}", "Content-Type": "application/json"}
    routes = [
        ("GET payload", "GET", "/api/notifications/{}", None),
        ("GET status", "GET", "/api/notifications/{}/status", None),
        ("POST receipt", "POST", "/api/notifications/{}/receipts", b'{"kind": "opened"}'),
    ]
    connection = http.client.HTTPConnection(HOST, ctx.api.port, timeout=10)
    try:
        for label, method, path, body in routes:
            rounds = []
            for _ in range(3):
                times = {"foreign": [], "missing": []}
                statuses = set()
                for number in range(SAMPLES):
                    order = ("foreign", "missing") if number % 2 == 0 else ("missing", "foreign")
                    for which in order:
                        elapsed, status = timed(connection, method, path.format(foreign if which == "foreign" else missing), headers, body)
                        times[which].append(elapsed)
                        statuses.add(status)
                t.need(t.expect(f"{label}: every answer", statuses == {404}, "404", sorted(statuses)))
                paired = statistics.median(a - b for a, b in zip(times["foreign"], times["missing"]))
                rounds.append((statistics.median(times["foreign"]), statistics.median(times["missing"]), paired))
                if abs(paired) <= LIMIT:
                    break
            shown = "; ".join(f"{a * 1e6:.0f} vs {b * 1e6:.0f} µs (paired {d * 1e6:+.1f})" for a, b, d in rounds)
            t.notes.append(f"{label}: someone else's vs missing {shown}")
            t.expect(f"{label}: median paired difference, someone else's id vs a missing one", abs(rounds[-1][2]) <= LIMIT,
                     f"within {LIMIT * 1e6:.0f} µs in one of three rounds of {SAMPLES}", shown)
    finally:
        connection.close()


CASES = [("timing/404-someone-elses-vs-missing", foreign_vs_missing)] if os.environ.get("SEC_TIMING") == "1" else []
