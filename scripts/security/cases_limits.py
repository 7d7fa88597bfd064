"""Limits: per-user quotas and connection timeouts (on api2, the API started with small quotas
and short timeouts), login timing, and brute force throttling without account lock-out."""
import http.client
import json
import os
import socket
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from harness import Failed, basic, wait_closed


def api2_up(ctx, t):
    problem = ctx.api2.live()
    t.need(t.expect("api2 (the API with quotas and timeouts)", problem is None, "running", problem))


def quota_notifications(ctx, t):
    api2_up(ctx, t)
    ctx.add_user(t, "quota_n")
    for number in range(1, 6):
        t.need(t.status(f"notification {number} of 5 in a minute", ctx.send("quota_n", port=ctx.api2.port), 202))
    t.status("notification 6 in a minute", ctx.send("quota_n", port=ctx.api2.port), 429, code="quota_exceeded", retry_after=True)


def quota_burst(ctx, t):
    """The default quota on the main API (600 a minute, 100 at once): 300 notifications back to
    back by one user on one connection are not all taken; the first 100 are, the rest get 429
    with Retry-After until the bucket refills (ten a second)."""
    ctx.add_user(t, "burst_n")
    token = ctx.secret(basic("burst_n", ctx.passwords["burst_n"]), "Basic credential of 'burst_n'")
    headers = {"Authorization": f"Basic {token}", "Content-Type": "application/json"}
    body = json.dumps({"message": "m", "richType": "text", "payload": "p"}).encode()
    connection = http.client.HTTPConnection("127.0.0.1", ctx.api.port, timeout=10)
    statuses, retry_after, started = [], set(), time.monotonic()
    try:
        for _ in range(300):
            connection.request("POST", "/api/notifications", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            if response.status == 429:
                retry_after.add(response.getheader("Retry-After"))
    finally:
        connection.close()
    took = time.monotonic() - started
    accepted = statuses.count(202)
    t.notes.append(f"{accepted} of 300 taken in {took:.1f} s")
    t.expect("statuses", set(statuses) <= {202, 429}, "202 or 429", sorted(set(statuses)))
    # 100 at once, and ten more a second while they were sent.
    t.expect("taken", 100 <= accepted <= 100 + 10 * took + 1, f"100 and the refill ({took:.1f} s)", accepted)
    t.expect("the first 100", statuses[:100] == [202] * 100, "all 202", statuses[:100].count(202))
    t.expect("Retry-After on the 429s", retry_after and None not in retry_after, "present", retry_after)


def quota_payload_bytes(ctx, t):
    api2_up(ctx, t)
    ctx.add_user(t, "quota_b")
    big = os.urandom(75000).hex()  # 150,000 bytes of text
    t.status("one payload of 150,000 bytes (quota 100,000 live bytes)", ctx.send("quota_b", payload=big, port=ctx.api2.port), 429, code="quota_exceeded")
    t.need(t.status("a payload of 60,000 bytes", ctx.send("quota_b", payload=os.urandom(30000).hex(), port=ctx.api2.port), 202))
    t.status("another 60,000 bytes (120,000 live)", ctx.send("quota_b", payload=os.urandom(30000).hex(), port=ctx.api2.port), 429, code="quota_exceeded")


def quota_registrations(ctx, t):
    api2_up(ctx, t)
    ctx.add_user(t, "quota_r")
    for number in range(1, 4):
        _, put = ctx.register(t, "quota_r", port=ctx.api2.port)
        t.need(t.status(f"registration {number} of 3", put, 200))
    handle = ctx.secret(ctx.token("handle-quota_r"), "device handle of quota_r")
    created = ctx.http("POST", f"/api/register?handle={handle}", user="quota_r", port=ctx.api2.port)
    if created.status == 429:  # refusing the id already is fine
        t.status("registration 4 (POST)", created, 429, code="quota_exceeded")
        return
    t.need(t.status("registration 4 (POST)", created, (200, 429)))
    put = ctx.http("PUT", f"/api/register/{created.json()}", {"Platform": "apns", "Handle": handle, "Tags": []}, user="quota_r", port=ctx.api2.port)
    t.status("registration 4 (PUT)", put, 429, code="quota_exceeded")


def quota_tags(ctx, t):
    api2_up(ctx, t)
    ctx.add_user(t, "quota_t")
    _, put = ctx.register(t, "quota_t", tags=["t1", "t2", "t3"], port=ctx.api2.port)
    t.need(t.status("a registration with 3 tags (quota 5)", put, 200))
    _, put = ctx.register(t, "quota_t", tags=["t4", "t5", "t6"], port=ctx.api2.port)
    t.status("a second registration bringing the user's distinct tags to 6 (7 with username:)", put, 429, code="quota_exceeded")


def timeouts(ctx, t):
    """Both connections at once: one silent, one sending a header byte per second."""
    api2_up(ctx, t)
    results = {}

    def silent():
        with socket.create_connection(("127.0.0.1", ctx.api2.port), timeout=5) as sock:
            results["silent"] = wait_closed(sock, 6.0)

    def slow_header():
        with socket.create_connection(("127.0.0.1", ctx.api2.port), timeout=5) as sock:
            sock.sendall(b"GET /health/live HTTP/1.1\r\n")
            started = time.monotonic()
            for byte in b"X-Slow: " + b"a" * 20:
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    results["slow"] = time.monotonic() - started
                    return
                closed = wait_closed(sock, 1.0)
                if closed is not None:
                    results["slow"] = time.monotonic() - started
                    return
                if time.monotonic() - started > 8:
                    break
            results["slow"] = None

    threads = [threading.Thread(target=silent), threading.Thread(target=slow_header)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(12)
    shown = lambda value: "still open" if value is None else f"closed after {value:.1f}s"
    t.expect("a connection that sends nothing (--idle-timeout 2)", results.get("silent") is not None and results["silent"] <= 4.5,
             "closed within 4.5 s", shown(results.get("silent")))
    t.expect("a request line then one header byte a second (--idle-timeout 2)", results.get("slow") is not None and results["slow"] <= 5.5,
             "closed within 5.5 s", shown(results.get("slow")))


def slow_body(ctx, t):
    """A body that stalls after its head (--body-timeout 2): the server closes the connection."""
    api2_up(ctx, t)
    head = ("POST /api/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Basic {basic('alice', ctx.passwords['alice'])}\r\nContent-Length: 100\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", ctx.api2.port), timeout=6) as sock:
        sock.sendall(head + b'{"message":')
        closed = wait_closed(sock, 6.0)
    t.expect("a connection whose body stalls", closed is not None and closed <= 4.5, "closed within 4.5 s",
             "still open" if closed is None else f"closed after {closed:.1f} s")


def login_timing(ctx, t):
    """Medians of 25 unknown user names and 25 wrong passwords of alice, interleaved (a busy
    machine slows both alike; 10 of each once read x2.5 under a parallel build); attempt i comes
    from 127.0.R.(20+i) in round R, so login throttling (per user and address) does not answer them. Up to
    three rounds: a real leak shows in every round, while a burst of other work on the machine
    (the stages beside this one in scripts/test.sh) spoils one (2.5 vs 9.6 ms seen once, 2.4 vs
    2.3 ms alone right after)."""
    rounds = []
    for round_number in range(3):
        unknown, wrong, statuses = [], [], []
        for number in range(25):
            # A round of its own addresses: no (user, address) pair fails twice.
            source = f"127.0.{round_number}.{20 + number}"
            resp = ctx.http("GET", "/api/notifications", user=f"nobody{round_number}-{number}-{os.getpid()}", source=source,
                            password=ctx.secret(ctx.token("pw"), "wrong password"))
            unknown.append(resp.elapsed)
            statuses.append(f"unknown {resp.status}")
            resp = ctx.http("GET", "/api/notifications", user="alice", password=ctx.secret(ctx.token("alice-wrong"), "wrong password of alice"),
                            source=source)
            wrong.append(resp.elapsed)
            statuses.append(f"alice {resp.status}")
        t.expect("all 50 answers", all(status.endswith(" 401") for status in statuses), "401 (a 429 would spoil the timing)", statuses)
        a, b = statistics.median(unknown), statistics.median(wrong)
        rounds.append((a, b))
        if max(a, b) <= 2 * min(a, b):
            break
    t.notes.append("medians " + "; ".join(f"{a * 1000:.1f} ms unknown vs {b * 1000:.1f} ms wrong password" for a, b in rounds))
    a, b = rounds[-1]
    t.expect("median unknown user vs median wrong password of alice", max(a, b) <= 2 * min(a, b),
             "within a factor of 2 (in one of three rounds)",
             "; ".join(f"{a * 1000:.1f} ms vs {b * 1000:.1f} ms (x{max(a, b) / max(min(a, b), 1e-6):.1f})" for a, b in rounds))


def brute_force(ctx, t):
    barrier = threading.Barrier(200, timeout=10)

    def attempt(number):
        password = ctx.secret(f"bob-wrong-{number}-{os.getpid()}", "wrong password of bob")
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass
        return ctx.http("GET", "/api/notifications", user="bob", password=password, timeout=20)

    with ThreadPoolExecutor(max_workers=200) as pool:
        answers = list(pool.map(attempt, range(200)))
    counts = {}
    for resp in answers:
        counts[resp.status] = counts.get(resp.status, 0) + 1
    throttled = [resp for resp in answers if resp.status in (429, 503)]
    summary = ", ".join(f"{status or 'no answer'}: {count}" for status, count in sorted(counts.items()))
    t.notes.append(summary)
    t.expect("200 concurrent wrong passwords for bob: 401s", counts.get(401, 0) <= 10, "at most 10", summary)
    t.expect("the others", len(throttled) + counts.get(401, 0) == 200, "429 or 503", summary)
    missing = [resp for resp in throttled if not resp.header("Retry-After")]
    t.expect("Retry-After on the 429/503 answers", not missing, "on all", f"missing on {len(missing)}")
    recently = ctx.accepted.get("bob")
    right = ctx.http("GET", "/api/notifications", user="bob")
    if not t.status("then bob's right password from 127.0.0.1", right, 429, retry_after=True) and recently and right.status == 200:
        t.failures[-1] += (f" (the API had accepted bob's right password {time.monotonic() - recently:.0f}s before the flood:"
                           " remembered credentials seem to skip the throttle)")
    t.status("bob's right password from 127.0.0.2 (no account lock-out)", ctx.http("GET", "/api/notifications", user="bob", source="127.0.0.2"), 200)
    unlocked = ctx.cli("users", "unlock", "bob")
    t.need(t.expect("`users unlock bob`", unlocked.returncode == 0, "exit 0", f"exit {unlocked.returncode}: {(unlocked.stdout + unlocked.stderr).strip()[-300:]}"))
    t.status("bob's right password from 127.0.0.1 after unlock", ctx.http("GET", "/api/notifications", user="bob"), 200)


CASES = [
    ("quota/notifications-per-minute", quota_notifications, "api2"),
    ("quota/burst-of-300-back-to-back", quota_burst),
    ("quota/payload-bytes", quota_payload_bytes, "api2"),
    ("quota/registrations", quota_registrations, "api2"),
    ("quota/tags", quota_tags, "api2"),
    ("timeouts/idle-and-slow-header", timeouts, "api2"),
    ("timeouts/slow-body-closed", slow_body, "api2"),
]

LAST_CASES = [  # they leave failed logins behind: run after everything else
    ("auth/timing-unknown-vs-wrong-password", login_timing),
    ("auth/brute-force-throttled-not-locked", brute_force),
]
