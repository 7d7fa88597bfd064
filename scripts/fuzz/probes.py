"""Contract probes: the answers a fuzzer rarely reaches (401, 403, 304, 405, 409, 413, 415, 422,
429, 503, 404 for what is not yours), each sent once and checked against the document with
schemathesis's own checks. Usage: python - SPEC BASE_URL MODE (MODE: up, or down once Redis is
stopped). Credentials come from the environment (FUZZ_PASSWORD_<USER>, FUZZ_KEY_<SCOPE>,
FUZZ_REGISTRATION_BOB, FUZZ_MAX_PAYLOAD, FUZZ_BODY_TIMEOUT). Prints one line per probe and 'probes: N passed, N failed'."""
import base64
import json
import os
import sys
import urllib.parse

import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi import checks as oc

spec, base, mode = sys.argv[1:4]
schema = schemathesis.openapi.from_url(spec) if spec.startswith("http") else schemathesis.openapi.from_path(spec)
schema.config.update(base_url=base)
raw = schema.raw_schema
CHECKS = [not_a_server_error, oc.status_code_conformance, oc.content_type_conformance,
          oc.response_schema_conformance, oc.response_headers_conformance]
METHODS = ["get", "post", "put", "delete", "patch", "head", "options", "trace"]
passed, failed = 0, []


def password(user):
    return os.environ.get(f"FUZZ_PASSWORD_{user.upper()}", "wrong")


def basic(user, secret=None):
    token = base64.b64encode(f"{user}:{secret if secret is not None else password(user)}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def bearer(scope):
    token = os.environ.get(f"FUZZ_KEY_{scope.upper()}")
    return {"Authorization": f"Bearer {token}"} if token else None


def describe(resp):
    req = resp.request
    body = req.body if isinstance(req.body, (str, type(None))) else req.body[:200]
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if body and len(body) > 200:
        body = body[:200] + f"... ({len(body)} bytes)"
    headers = " ".join(f"-H '{k}: {'[credentials]' if k.lower() == 'authorization' else v}'"
                       for k, v in req.headers.items() if k.lower() in ("authorization", "content-type", "if-none-match", "content-length"))
    shown = {k: v for k, v in resp.headers.items() if k.lower() not in ("date", "server")}
    return (f"      request:  curl -X {req.method} {headers} {('-d ' + repr(body)) if body else ''} '{req.url}'\n"
            f"      response: {resp.status_code} {shown} "
            + (repr(resp.text[:300]) if resp.headers.get("Content-Type", "").startswith(("application/json", "text/")) else f"({len(resp.content)} bytes)"))


def expect_that(name, condition, resp, detail):
    global passed
    if condition:
        passed += 1
        print(f"probe ok   {name}")
    else:
        failed.append(name)
        print(f"probe FAIL {name}: {detail}" + ("\n" + describe(resp) if resp is not None else ""))


warnings = []


def probe(name, method, path, expect, *, template=None, code=None, allow=None, advisory=False, **kwargs):
    """Sends one request; checks the status, the error code, and (for a documented operation)
    everything schemathesis checks about the answer."""
    global passed
    try:
        resp = requests.request(method, base + path, timeout=15, allow_redirects=False, **kwargs)
    except requests.RequestException as error:
        failed.append(name)
        print(f"probe FAIL {name}: {method} {path}: {error}")
        return None
    problems = []
    if resp.status_code not in expect:
        problems.append(f"expected {' or '.join(map(str, expect))}, got {resp.status_code}")
    if code is not None and method != "HEAD":
        try:
            got = resp.json()["error"]["code"]
        except Exception:
            got = None
        if got != code:
            problems.append(f"expected error code {code!r}, got {got!r}")
    if allow is not None and resp.status_code == 405:
        advertised = {m.strip().lower() for m in resp.headers.get("Allow", "").split(",") if m.strip()}
        if advertised != allow:
            problems.append(f"Allow {resp.headers.get('Allow')!r} is not the documented {sorted(m.upper() for m in allow)}")
    if template is not None and method.lower() in raw["paths"].get(template, {}):
        case = schema[template][method.upper()].Case()
        try:
            # Without Redis a 5xx (503) is the documented answer: every check but not_a_server_error.
            case.validate_response(resp, checks=CHECKS if mode == "up" else CHECKS[1:])
        except (Exception, BaseExceptionGroup) as error:
            problems.append(" ".join(str(error).split())[:600])
    if problems and advisory:
        warnings.append(name)
        print(f"probe WARN {name}: " + "; ".join(problems) + "\n" + describe(resp))
    elif problems:
        failed.append(name)
        print(f"probe FAIL {name}: " + "; ".join(problems) + "\n" + describe(resp))
    else:
        passed += 1
        print(f"probe ok   {name} ({resp.status_code})")
    return resp


alice, root, bob = basic("alice"), basic("root"), basic("bob")
JSON = {"Content-Type": "application/json"}
bob_registration = os.environ.get("FUZZ_REGISTRATION_BOB", "missing")
max_payload = int(os.environ.get("FUZZ_MAX_PAYLOAD", "65536"))


def concrete(template):
    return template.replace("{id}", bob_registration if template.startswith("/api/register/") else "1")


def minimal_body(template, method):
    if template.startswith("/api/register/") and method == "put":
        return {"json": {"Platform": "apns", "Handle": "probe-handle"}}
    if template.endswith("/receipts"):
        return {"json": {"kind": "displayed"}}
    return {}


if mode == "up":
    # 401 on every operation that needs credentials: none, a wrong password, a malformed and an
    # unknown API key.
    for template, item in raw["paths"].items():
        for method, operation in item.items():
            if method not in METHODS or operation.get("security", raw.get("security")) == []:
                continue
            body = minimal_body(template, method)
            probe(f"{method.upper()} {template} without credentials", method.upper(), concrete(template), [401],
                  template=template, code="unauthorized", **body)
    probe("wrong password", "GET", "/api/notifications", [401], template="/api/notifications", code="unauthorized",
          headers=basic("mallory", "not-the-password"))
    probe("Bearer token that is no API key", "GET", "/api/notifications", [401], template="/api/notifications",
          code="unauthorized", headers={"Authorization": "Bearer nope"})
    probe("unknown API key", "GET", "/api/notifications", [401], template="/api/notifications", code="unauthorized",
          headers={"Authorization": "Bearer rpk_0123456789abcdef_" + "A" * 43})

    # API keys and their scopes.
    read, send, admin = bearer("read"), bearer("send"), bearer("admin")
    if read:
        probe("read key sends", "POST", "/api/notifications", [403], template="/api/notifications", code="insufficient_scope", headers=read)
        probe("read key asks for a registration id", "POST", "/api/register?handle=probe", [403], template="/api/register",
              code="insufficient_scope", headers=read)
        probe("read key saves a registration", "PUT", "/api/register/probe-key", [403], template="/api/register/{id}",
              code="insufficient_scope", headers=read, json={"Platform": "apns", "Handle": "probe-key"})
        probe("read key deletes a registration", "DELETE", "/api/register/probe-key", [403], template="/api/register/{id}",
              code="insufficient_scope", headers=read)
        probe("read key lists", "GET", "/api/notifications", [200], template="/api/notifications", headers=read)
        probe("read key fetches a payload", "GET", "/api/notifications/1", [200], template="/api/notifications/{id}", headers=read)
        probe("read key reads a status", "GET", "/api/notifications/1/status", [200], template="/api/notifications/{id}/status", headers=read)
    if send:
        probe("send key sends", "POST", "/api/notifications", [202], template="/api/notifications", headers=send)
        probe("send key lists", "GET", "/api/notifications", [403], template="/api/notifications", code="insufficient_scope", headers=send)
        probe("send key posts a receipt", "POST", "/api/notifications/1/receipts", [403], template="/api/notifications/{id}/receipts",
              code="insufficient_scope", headers=send, json={"kind": "opened"})
    if admin:
        probe("admin key asks for a registration id", "POST", "/api/register?handle=probe-admin", [200], template="/api/register", headers=admin)

    # The payload and its validators.
    first = probe("payload", "GET", "/api/notifications/1", [200], template="/api/notifications/{id}", headers=alice)
    etag = first.headers.get("ETag") if first is not None else None
    if etag:
        probe("payload, If-None-Match its ETag", "GET", "/api/notifications/1", [304], template="/api/notifications/{id}",
              headers={**alice, "If-None-Match": etag})
        probe("payload, If-None-Match a list holding its ETag (RFC 9110 13.1.2)", "GET", "/api/notifications/1", [304],
              template="/api/notifications/{id}", headers={**alice, "If-None-Match": f'"0000", {etag}'})
        probe("payload, If-None-Match its weak ETag (weak comparison)", "GET", "/api/notifications/1", [304],
              template="/api/notifications/{id}", headers={**alice, "If-None-Match": "W/" + etag})
        probe("payload, If-None-Match *", "GET", "/api/notifications/1", [304], template="/api/notifications/{id}",
              headers={**alice, "If-None-Match": "*"})
    probe("send an HTML payload (no device shows it)", "POST", "/api/notifications", [415], template="/api/notifications",
          code="unsupported_payload_type",
          headers={**alice, **JSON}, data=json.dumps({"richType": "text", "payload": "<script>alert(1)</script>", "contentType": "text/html"}))
    # A JSON document that is one string (the 200's schema is a string): a script inside it must
    # still be served as an attachment.
    script = probe("send a script-looking JSON payload", "POST", "/api/notifications", [202], template="/api/notifications",
                   headers={**alice, **JSON}, data=json.dumps({"richType": "text", "payload": json.dumps("<script>alert(1)</script>"), "contentType": "application/json"}))
    if script is not None and script.status_code == 202:
        got = probe("fetch the JSON payload", "GET", script.json()["payload"], [200], template="/api/notifications/{id}", headers=alice)
        if got is not None:
            expect_that("a JSON payload is an attachment", got.headers.get("Content-Disposition", "").startswith("attachment"), got,
                        "expected Content-Disposition: attachment")

    # What is not yours.
    probe("alice saves bob's registration id", "PUT", f"/api/register/{bob_registration}", [404], template="/api/register/{id}",
          code="not_found", headers=alice, json={"Platform": "apns", "Handle": "probe-alice"})
    probe("alice deletes bob's registration", "DELETE", f"/api/register/{bob_registration}", [404], template="/api/register/{id}",
          code="not_found", headers=alice)
    probe("alice registers bob's push handle", "PUT", "/api/register/probe-taken", [409], template="/api/register/{id}",
          code="handle_taken", headers=alice, json={"Platform": "apns", "Handle": "device-token-1"})
    probe("alice sends to another tag", "POST", "/api/notifications", [403], template="/api/notifications", code="forbidden",
          headers={**alice, **JSON}, data=json.dumps({"richType": "text", "payload": "hi", "target": "sports"}))
    probe("alice tags her device username:bob", "PUT", "/api/register/probe-tag", [403], template="/api/register/{id}",
          code="forbidden", headers=alice, json={"Platform": "apns", "Handle": "probe-tag", "Tags": ["username:bob"]})
    hidden = probe("root sends to a tag nobody has", "POST", "/api/notifications", [202], template="/api/notifications",
                   headers={**root, **JSON}, data=json.dumps({"richType": "text", "payload": "hi", "target": "nobody"}))
    if hidden is not None and hidden.status_code == 202:
        nid = hidden.json()["id"]
        probe("alice fetches root's notification to others", "GET", f"/api/notifications/{nid}", [404],
              template="/api/notifications/{id}", code="not_found", headers=alice)
        probe("alice reads its status", "GET", f"/api/notifications/{nid}/status", [404],
              template="/api/notifications/{id}/status", code="not_found", headers=alice)
        probe("alice posts a receipt for it", "POST", f"/api/notifications/{nid}/receipts", [404],
              template="/api/notifications/{id}/receipts", code="not_found", headers=alice, json={"kind": "opened"})
    probe("receipt for bob's installation", "POST", "/api/notifications/1/receipts", [404], template="/api/notifications/{id}/receipts",
          code="not_found", headers=alice, json={"kind": "opened", "installation": bob_registration})
    probe("receipt, then the same again", "POST", "/api/notifications/1/receipts", [200], template="/api/notifications/{id}/receipts",
          headers=alice, json={"kind": "opened"})
    again = probe("the same receipt again", "POST", "/api/notifications/1/receipts", [200], template="/api/notifications/{id}/receipts",
                  headers=alice, json={"kind": "opened"})
    if again is not None and again.status_code == 200:
        expect_that("a repeated receipt says duplicate", again.json().get("duplicate") is True, again, "expected duplicate: true")

    # Malformed and invalid input.
    probe("id 0", "GET", "/api/notifications/0", [400], template="/api/notifications/{id}", code="bad_id", headers=alice)
    probe("id with a leading zero", "GET", "/api/notifications/01/status", [400], template="/api/notifications/{id}/status", code="bad_id", headers=alice)
    probe("id over Int64", "GET", "/api/notifications/99999999999999999999", [400], template="/api/notifications/{id}", code="bad_id", headers=alice)
    probe("registration id with '_'", "DELETE", "/api/register/a_b", [400], template="/api/register/{id}", code="bad_id", headers=alice)
    probe("registration id of 65 characters", "PUT", "/api/register/" + "a" * 65, [400], template="/api/register/{id}", code="bad_id",
          headers=alice, json={"Platform": "apns", "Handle": "x"})
    probe("empty handle: a new id", "POST", "/api/register?handle=", [200], template="/api/register", headers=alice)
    probe("handle with a space", "POST", "/api/register?handle=a%20b", [400], template="/api/register", code="bad_handle", headers=alice)
    probe("limit 0", "GET", "/api/notifications?limit=0", [400], template="/api/notifications", code="bad_limit", headers=alice)
    probe("cursor x", "GET", "/api/notifications?cursor=x", [400], template="/api/notifications", code="bad_cursor", headers=alice)
    probe("a page of one", "GET", "/api/notifications?limit=1", [200], template="/api/notifications", headers=alice)
    probe("broken JSON", "POST", "/api/notifications", [400], template="/api/notifications", code="malformed_json",
          headers={**alice, **JSON}, data="{")
    probe("multipart without a boundary", "POST", "/api/notifications", [400], template="/api/notifications",
          code="malformed_multipart", headers={**alice, "Content-Type": "multipart/form-data"}, data="x")
    probe("multipart", "POST", "/api/notifications", [202], template="/api/notifications", headers=alice,
          data={"message": "probe"}, files={"image": ("i.png", b"\x89PNG\r\n\x1a\nprobe", "image/png")})
    probe("text/csv body", "POST", "/api/notifications", [415], template="/api/notifications", code="unsupported_media_type",
          headers={**alice, "Content-Type": "text/csv"}, data="a,b")
    probe("unknown rich type", "POST", "/api/notifications", [422], template="/api/notifications", code="unknown_rich_type",
          headers={**alice, **JSON}, data=json.dumps({"richType": "video", "payload": "AAAA"}))
    probe("receipt kind lost", "POST", "/api/notifications/1/receipts", [422], template="/api/notifications/{id}/receipts",
          code="bad_kind", headers=alice, json={"kind": "lost"})
    probe("61 tags", "PUT", "/api/register/probe-many", [422], template="/api/register/{id}", headers=alice,
          json={"Platform": "apns", "Handle": "probe-many", "Tags": [f"t{i}" for i in range(61)]})
    probe("payload over --max-payload-bytes", "POST", "/api/notifications", [413], template="/api/notifications", code="too_large",
          headers={**alice, **JSON}, data=json.dumps({"richType": "text", "payload": "x" * (max_payload + 1)}))
    probe("registration body over 64 KiB", "PUT", "/api/register/probe-big", [413], template="/api/register/{id}", code="too_large",
          headers={**alice, **JSON}, data=json.dumps({"Platform": "apns", "Handle": "probe-big", "Tags": ["t" * 100] * 700}))
    probe("receipt body over 16 KiB", "POST", "/api/notifications/1/receipts", [413], template="/api/notifications/{id}/receipts",
          code="too_large", headers=alice, json={"kind": "opened", "installation": "x" * 17000})

    # Methods: 405 with Allow listing exactly the documented methods, on every documented path;
    # HEAD where GET is served may instead answer as GET does, without a body. One probe per
    # method, over all paths.
    for method in METHODS:
        wrong = []
        for template, item in raw["paths"].items():
            documented = {m for m in item if m in METHODS}
            if method in documented:
                continue
            resp = requests.request(method.upper(), base + concrete(template), headers=alice, timeout=15)
            accepted = {405}
            if method == "head" and "get" in documented:
                accepted.add(requests.get(base + concrete(template), headers=alice, timeout=15).status_code)
            advertised = {m.strip().lower() for m in resp.headers.get("Allow", "").split(",") if m.strip()}
            if resp.status_code not in accepted:
                wrong.append(f"{template} {resp.status_code}")
            elif resp.status_code == 405 and advertised != documented:
                wrong.append(f"{template} Allow {resp.headers.get('Allow')!r}")
        if wrong or method not in ("get", "post", "put", "delete"):
            expect_that(f"{method.upper()} on documented paths that do not serve it: 405 with Allow", not wrong, None,
                        f"{len(wrong)} paths answered otherwise: " + ", ".join(wrong))
        else:
            expect_that(f"{method.upper()} on documented paths that do not serve it: 405 with Allow", True, None, "")
    probe("unknown path", "GET", "/api/nothing", [404], code="not_found", headers=alice)

    # A body that does not arrive in time: the connection is closed without an answer (when the
    # API was started with a short --body-timeout).
    body_timeout = float(os.environ.get("FUZZ_BODY_TIMEOUT") or 0)
    if body_timeout:
        import socket
        import time
        host, port = urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port
        with socket.create_connection((host, port), timeout=body_timeout + 10) as conn:
            conn.sendall(("POST /api/notifications HTTP/1.1\r\nHost: probe\r\n" + "".join(f"{k}: {v}\r\n" for k, v in alice.items())
                          + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mess").encode())
            started, answer = time.monotonic(), b""
            try:
                while chunk := conn.recv(65536):
                    answer += chunk
            except OSError:
                pass
        elapsed = time.monotonic() - started
        expect_that("a body that does not arrive within --body-timeout: connection closed", answer == b"" and elapsed < body_timeout + 5,
                    None, f"got {answer[:300]!r} after {elapsed:.1f} s (expected the connection closed, no answer, after about {body_timeout:.0f} s)")

    # Failed logins are throttled: 429 with Retry-After after the free failures.
    for attempt in range(1, 21):
        resp = requests.get(base + "/api/notifications", headers=basic("mallory", f"guess-{attempt}"), timeout=15)
        if resp.status_code != 401:
            break
    probe("failed logins throttled", "GET", "/api/notifications", [429], template="/api/notifications", code="too_many_requests",
          headers=basic("mallory", "guess-last"))
    # Last, as it may take the whole API down: a multipart part header with a byte above 0x7F
    # (the fuzzer's find: MultipartKit indexed its 128-entry table with it and trapped).
    probe("multipart part header with a non-ASCII byte", "POST", "/api/notifications", [400], template="/api/notifications",
          code="malformed_multipart", headers={**alice, "Content-Type": "multipart/form-data; boundary=b"},
          data=b"--b\r\n\x80: x\r\n\r\nv\r\n--b--\r\n")
else:
    # Redis is down: 503 with Retry-After, and liveness still 200.
    probe("ready without Redis", "GET", "/health/ready", [503], template="/health/ready", code="unavailable")
    probe("live without Redis", "GET", "/health/live", [200], template="/health/live")
    probe("list without Redis", "GET", "/api/notifications", [503], template="/api/notifications", code="unavailable", headers=alice)
    probe("send without Redis", "POST", "/api/notifications", [503], template="/api/notifications", code="unavailable", headers=alice)
    probe("new login without Redis", "GET", "/api/notifications", [503], template="/api/notifications", code="unavailable",
          headers=bob)

print(f"probes ({mode}): {passed} passed, {len(failed)} failed" + (f", {len(warnings)} advisory warnings" if warnings else ""))
sys.exit(1 if failed else 0)
