"""Hostile input: deep tag expressions, broken multipart and chunked bodies, aborted bodies,
huge graphemes, long passwords, odd methods and Host headers, a huge Content-Length."""
import re
import socket
import struct
import time

from harness import Failed, raw_request

DEEP_TARGETS = {
    "not-x100000": "!" * 100000 + "x",
    "or-x50000": "a||" * 50000 + "a",
    "and-x50000": "a&&" * 50000 + "a",
    "parens-x100000": "(" * 100000 + "a" + ")" * 100000,
}

ERROR_LINE = re.compile(r"^\S+\s+(error|critical)\s|\blevel[=:]\"?(error|critical)\b", re.M)


def deep_tag_as_user(target):
    def case(ctx, t):
        t.status("alice sends to a deep expression (not her username: tag)", ctx.send("alice", target=target), 403)
    return case


def deep_tag_as_admin(target):
    def case(ctx, t):
        t.status("root sends to a deep expression", ctx.send("root", target=target), 422, code="bad_target")
    return case


def valid_tag_as_admin(ctx, t):
    t.status("root sends to 'sports || (news && !weekend)'", ctx.send("root", target="sports || (news && !weekend)"), 202)


def multipart(boundary_param, boundary):
    """A Content-Type whose boundary parameter is `boundary_param`, and a body built on `boundary`."""
    def case(ctx, t):
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"message\"\r\n\r\nhi\r\n--{boundary}--\r\n").encode()
        resp = ctx.http("POST", "/api/notifications", body, user="alice",
                        content_type=f"multipart/form-data; boundary={boundary_param}")
        t.status(f"multipart with boundary={boundary_param[:20]}{'…' if len(boundary_param) > 20 else ''}", resp, 400, code="malformed_multipart")
    return case


def error_lines(ctx, offset):
    time.sleep(0.3)  # let the API write its lines
    return [line for line in ctx.api.log_since(offset).splitlines() if ERROR_LINE.search(line)]


def malformed_chunked(ctx, t):
    offset = ctx.api.log_size()
    head = (f"POST /api/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\n{ctx.auth_header('alice')}"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").encode()
    resp = raw_request(ctx.api.port, [head], timeout=5)
    t.expect("chunk size 'zz'", resp.status == 400, "400", resp.brief())
    lines = error_lines(ctx, offset)
    t.expect("api.log during the malformed chunked body", not lines, "no error-level line", lines[:2])


def aborted_body(reset):
    """A client sends 1,000 of 100,000 announced body bytes, then closes (FIN) or resets (RST)."""
    def case(ctx, t):
        offset = ctx.api.log_size()
        head = (f"POST /api/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\n{ctx.auth_header('alice')}"
                "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"message\":\"").encode()
        sock = socket.create_connection(("127.0.0.1", ctx.api.port), timeout=5)
        sock.sendall(head + b"x" * 1000)
        time.sleep(0.3)
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        lines = error_lines(ctx, offset)
        t.expect(f"api.log after a client {'reset' if reset else 'closed'} the connection mid-body", not lines, "no error-level line", lines[:2])
    return case


def handle_not_logged(ctx, t):
    handle = ctx.secret("SECRET-HANDLE-123", "device handle SECRET-HANDLE-123")
    offset = ctx.api.log_size()
    resp = ctx.http("POST", f"/api/register?handle={handle}", user="alice")
    t.status("POST /api/register?handle=SECRET-HANDLE-123", resp, 200)
    time.sleep(0.3)
    lines = [line for line in ctx.api.log_since(offset).splitlines() if handle in line]
    t.expect("api.log", not lines, "no line holding the handle", lines[:2])


def log_injection(ctx, t):
    forged = "INJECTED-LINE 2099-01-01T00.00.00+0000 error richpush.api forged"  # no ':' (Basic splits there)
    name = f"ghost\n{forged}\r\n{forged}"
    offset = ctx.api.log_size()
    resp = ctx.http("GET", "/api/notifications", user=name, password="whatever-pw")
    t.status("Basic user name holding newlines", resp, (400, 401))
    time.sleep(0.3)
    lines = [line for line in ctx.api.log_since(offset).splitlines() if line.startswith("INJECTED-LINE")]
    t.expect("api.log", not lines, "no line starting with the injected text", lines[:2])


def payload_headers(ctx, t):
    for declared in ("text/html", "image/svg+xml"):
        t.status(f"a payload declared {declared} (no device shows it)",
                 ctx.send("alice", payload="<script>alert(1)</script>", fields={"contentType": declared}), 415, code="unsupported_payload_type")
    nid = ctx.sent_id(t, "alice sends a script-looking JSON payload",
                      ctx.send("alice", payload="<script>alert(1)</script>", fields={"contentType": "application/json"}))
    resp = ctx.http("GET", f"/api/notifications/{nid}", user="alice")
    t.need(t.status("GET the payload", resp, 200))
    t.expect("X-Content-Type-Options", resp.header("X-Content-Type-Options") == "nosniff", "nosniff", resp.header("X-Content-Type-Options"))
    t.expect("Content-Security-Policy", bool(resp.header("Content-Security-Policy")), "present", resp.header("Content-Security-Policy"))
    t.expect("Content-Disposition", bool(resp.header("Content-Disposition")), "present", resp.header("Content-Disposition"))


def one_huge_grapheme(ctx, t):
    message = "e" + "\u0301" * 600000  # one grapheme, 1.2 MB of UTF-8
    started = time.monotonic()
    resp = ctx.send("alice", message=message, timeout=15)
    t.status("a 1.2 MB message that is one grapheme", resp, 422)
    t.expect("time to answer", resp.elapsed < 5 or resp.status == 0, "< 5 s", f"{time.monotonic() - started:.1f}s")


def long_password(ctx, t):
    password = ctx.add_user(t, "longpw", password=(ctx.token("lp") + "P" * 72)[:72])
    t.need(t.expect("test setup: password length", len(password.encode()) == 72, 72, len(password.encode())))
    t.status("longpw with the right 72-byte password", ctx.http("GET", "/api/notifications", user="longpw"), 200)
    longer = ctx.secret(password + "X", "73-byte password of longpw")
    t.status("longpw with 73 bytes whose first 72 are the password", ctx.http("GET", "/api/notifications", user="longpw", password=longer), 401)


def delete_collection(ctx, t):
    resp = ctx.http("DELETE", "/api/notifications", user="alice")
    if t.status("DELETE /api/notifications", resp, 405):
        t.expect("Allow header", bool(resp.header("Allow")), "present", dict(resp.headers))


def missing_host(ctx, t):
    resp = raw_request(ctx.api.port, [b"GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n"])
    t.expect("HTTP/1.1 request without Host", resp.status == 400, "400", resp.brief())


def two_hosts(ctx, t):
    resp = raw_request(ctx.api.port, [b"GET /health/live HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n"])
    t.expect("HTTP/1.1 request with two Host headers", resp.status == 400, "400", resp.brief())


def huge_content_length(ctx, t):
    head = (f"POST /api/notifications HTTP/1.1\r\nHost: 127.0.0.1\r\n{ctx.auth_header('alice')}"
            "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n").encode()
    resp = raw_request(ctx.api.port, [head], timeout=3)
    t.expect("Content-Length: 10000000000 and no body", resp.status == 413, "413", resp.brief())
    if resp.status:
        t.expect("time to the 413", resp.elapsed <= 1.0, "<= 1 s", f"{resp.elapsed:.2f}s")


CASES = [
    *[(f"deep-tags/{kind}/user-403", deep_tag_as_user(target)) for kind, target in DEEP_TARGETS.items()],
    *[(f"deep-tags/{kind}/admin-422", deep_tag_as_admin(target)) for kind, target in DEEP_TARGETS.items()],
    ("deep-tags/valid/admin-202", valid_tag_as_admin),
    ("multipart/boundary-empty", multipart("", "")),
    ("multipart/boundary-quoted-empty", multipart('""', "")),
    ("multipart/boundary-71-chars", multipart("b" * 71, "b" * 71)),
    ("body/chunked-malformed", malformed_chunked),
    ("body/client-closes-mid-body", aborted_body(reset=False)),
    ("body/client-resets-mid-body", aborted_body(reset=True)),
    ("body/content-length-10G-413", huge_content_length),
    ("logs/handle-not-logged", handle_not_logged),
    ("logs/user-name-newline-injection", log_injection),
    ("payload/security-headers", payload_headers),
    ("input/one-grapheme-1.2MB-422", one_huge_grapheme),
    ("auth/73-byte-password-401", long_password),
    ("http/delete-collection-405", delete_collection),
    ("http/missing-host-400", missing_host),
    ("http/two-hosts-400", two_hosts),
]
