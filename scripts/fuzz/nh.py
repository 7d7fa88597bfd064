"""Fuzzes the API's Notification Hubs listener (scripts/fuzz.sh): seeded, reproducible requests
made by mutating valid ones, over TLS with keys of hub `shop`. Python's standard library alone,
and scripts/nh/wire.py.

Usage: python3 scripts/fuzz/nh.py MODE   (MODE: up, or down once Redis is stopped)

up: FUZZ_NH_REQUESTS (default 400) requests, each drawn from its own random generator seeded with
"SEED:N" (so request N is the same whatever ran before it): registrations (Atom XML, byte- and
token-level mutations: DOCTYPEs and entities, CDATA, comments, deep and wide trees, bytes that are
not UTF-8, truncation), installations (JSON, values of any type and depth, then byte mutations),
JSON Patches (ops and paths from NH's vocabulary and beyond), sends (ServiceBusNotification-Tags
from a random expression grammar, -Format, -ScheduleTime, apns-* headers, direct sends), reads
($filter, $top, continuation tokens) and mutated SharedAccessSignature tokens. Every answer must
come (no dropped connection), within 5 s, below 500, a refusal with a body in NH's
`<Error><Code>…</Code><Detail>…</Detail></Error>`, holding no key and nothing of /etc/passwd.
Then the listener must still take a valid installation and a valid send.
down: with Redis stopped, each kind of request once: NH's answer for a store that is unavailable,
503 with Retry-After as RichPush's own API gives it, never a 500.

Environment: FUZZ_NH_FULL, FUZZ_NH_LISTEN (connection strings of shop's two default rules),
FUZZ_NH_CA (the listener's certificate), FUZZ_NH_SEED (default: a random one, printed),
FUZZ_NH_REQUESTS, FUZZ_NH_ONLY (one request number: replays that request alone), FUZZ_NH_DIR
(where a failing request's body is written, nh-<N>.body, to replay with curl --data-binary).
Prints one line per failure and per 100 requests, then 'nh fuzz (MODE): N passed, M failed'.
"""
import json
import os
import random
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nh"))

import wire  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "up"
ca = os.environ["FUZZ_NH_CA"]
full = wire.Hub(os.environ["FUZZ_NH_FULL"], "shop", ca)
listen = wire.Hub(os.environ["FUZZ_NH_LISTEN"], "shop", ca)
seed = int(os.environ.get("FUZZ_NH_SEED") or random.SystemRandom().randrange(1, 2**31))
count = int(os.environ.get("FUZZ_NH_REQUESTS", "400"))
only = os.environ.get("FUZZ_NH_ONLY")
out_dir = os.environ.get("FUZZ_NH_DIR", "")
KEYS = {full.key: "shop's Full key", listen.key: "shop's Listen key"}
try:
    with open("/etc/passwd") as _file:
        PASSWD = ["root:x:0:0"] + [line for line in _file.read().splitlines() if len(line) >= 12][:40]
except OSError:
    PASSWD = ["root:x:0:0"]

XML = {"Content-Type": "application/atom+xml;type=entry;charset=utf-8"}
JSON = {"Content-Type": "application/json"}
POOL = [f"fz-{n}" for n in range(12)]  # installations the patches find

# -- building blocks -----------------------------------------------------------------------------

TEXTS = ["", "a", "sports", "x" * 121, "x" * 5000, "café", "\u202e", "😀" * 50, "\x00", "\x01\x7f", "a b", "a,b", "$(message)",
         "{{x}}", "%00", "../..", "&amp;", "<", ">", "'", '"', "\\", "\ud7ff", "9" * 40, "-1", "1e309", "null", "true"]
HOSTILE_XML = [
    '<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>', "&x;", '<!DOCTYPE e SYSTEM "http://127.0.0.1:1/x">',
    '<!ENTITY % p SYSTEM "file:///etc/passwd">', "%p;", "&#0;", "&#xD800;", "&#x110000;", "&#xFFFFFFFFFF;", "&amp", "&;", "&#;",
    "<![CDATA[", "]]>", "<!--", "-->", "<?xml version='1.0'?>", "<?pi x?>", "<!", "</", "/>", "<", ">", "=", '"', "'", "\x00",
    "\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "xmlns:i=\"x\"", 'i:type="AppleRegistrationDescription"',
    'i:nil="true"', "<a>" * 40, "</a>" * 40, "<x/>" * 600, "<" + "n" * 300 + ">", " a=\"1\"" * 20, "&lt;" * 2000,
]
NAMES = ["Tags", "DeviceToken", "BodyTemplate", "TemplateName", "ApnsHeaders", "ApnsHeader", "Header", "Value", "Expiry",
         "FcmV1RegistrationId", "GcmRegistrationId", "RegistrationId", "ETag", "ExpirationTime", "PushVariables", "Priority",
         "Endpoint", "P256DH", "Auth", "content", "entry", "AppleRegistrationDescription", "RegistrationDescription", "title"]
TOKEN = "c1" * 32


def seeds():
    """Valid registration entries, as NH's SDKs write them."""
    connect = wire.CONNECT
    return [
        wire.entry(wire.apple()),
        wire.entry(f'<AppleTemplateRegistrationDescription {connect}><Tags>sports, vip</Tags><DeviceToken>{TOKEN}</DeviceToken>'
                   '<BodyTemplate><![CDATA[{"aps":{"alert":"$(message)"}}]]></BodyTemplate><TemplateName>alert</TemplateName>'
                   '<ApnsHeaders><ApnsHeader><Header>apns-priority</Header><Value>10</Value></ApnsHeader></ApnsHeaders>'
                   '</AppleTemplateRegistrationDescription>', updated="<updated>2026-12-07T00:00:00Z</updated>"),
        wire.entry(f'<RegistrationDescription {connect} i:type="FcmV1RegistrationDescription"><RegistrationId i:nil="true"/>'
                   '<Tags>android</Tags><FcmV1RegistrationId>fcm-token-1</FcmV1RegistrationId></RegistrationDescription>'),
        '<?xml version="1.0" encoding="utf-8"?><!-- a comment -->' + wire.entry(
            f'<FcmV1TemplateRegistrationDescription {connect}><Tags>a</Tags><FcmV1RegistrationId>t</FcmV1RegistrationId>'
            '<BodyTemplate>{"message":{"data":{"m":"$(m)"}}}</BodyTemplate></FcmV1TemplateRegistrationDescription>'),
    ]


def random_text(rng):
    if rng.random() < 0.6:
        return rng.choice(TEXTS)
    return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x800), rng.randrange(0x800, 0xD800),
                                   rng.randrange(0xE000, 0x110000)])) for _ in range(rng.randrange(0, 40)))


def random_json(rng, depth=0, budget=None):
    """A JSON value of any type, nested up to 4 levels (or a bomb: deep, or 61 and more items),
    of at most about 300 values in all."""
    budget = budget if budget is not None else [300]
    budget[0] -= 1
    roll = rng.random()
    if depth > 3 or budget[0] <= 0 or roll < 0.35:
        return rng.choice([None, True, False, 0, -1, 2**63, 1.5e308, -0.0, random_text(rng), rng.randrange(-10**6, 10**6)])
    if roll < 0.45:
        return [random_json(rng, depth + 1, budget) for _ in range(rng.choice([0, 1, 2, 5]))]
    if roll < 0.5:  # wide: scalars
        return [rng.choice([0, "a", None, random_text(rng)]) for _ in range(rng.choice([61, 200, 3000]))]
    if roll < 0.6:  # deep
        return json.loads(wire.deep_json(rng.choice([7, 20, 300]), rng.choice(["array", "object"])))
    return {random_text(rng)[:20] or "k": random_json(rng, depth + 1, budget) for _ in range(rng.randrange(0, 6))}


def mutate_bytes(rng, data, hostile=()):
    """1 to 4 mutations of `data` (bytes): flips, inserts (random bytes or a hostile snippet),
    deletions, duplications, truncation."""
    data = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        at = rng.randrange(0, len(data) + 1)
        roll = rng.random()
        if roll < 0.2 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif roll < 0.45 and hostile:
            snippet = rng.choice(hostile)
            data[at:at] = snippet.encode("latin-1") if all(ord(c) < 256 for c in snippet) else snippet.encode()
        elif roll < 0.6:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        elif roll < 0.75 and data:
            del data[at:at + rng.randrange(1, 40)]
        elif roll < 0.9 and data:
            end = min(len(data), at + rng.randrange(1, 200))
            data[at:at] = data[at:end] * rng.randrange(1, 30)
        else:
            del data[at:]
        del data[70000:]  # a little over the listener's 64 KiB at most
    return bytes(data)


def mutate_xml(rng, text):
    """Token-level: element names swapped, text replaced; then bytes."""
    if rng.random() < 0.4:
        old, new = rng.choice(NAMES), rng.choice(NAMES)
        text = text.replace(old, new, rng.randrange(1, 3))
    if rng.random() < 0.3:
        text = text.replace("sports", random_text(rng).replace("<", "&lt;"), 1)
    data = text.encode()
    return mutate_bytes(rng, data, HOSTILE_XML) if rng.random() < 0.85 else data


def expression(rng, depth=0):
    """A tag expression from NH's grammar, now and then broken."""
    roll = rng.random()
    if depth > 4 or roll < 0.35:
        return rng.choice(["sports", "news", "a", "b_c", "x:y", "t@u", "#h", "$UserId:{alice}", "$UserId:{a b}", "$InstallationId:{fz-1}",
                           "$InstallationId:{", "$Other:{x}", "*", "", "x" * 121, "é", "!", "(", ")", "&&", "||"])
    if roll < 0.5:
        return "!" + expression(rng, depth + 1)
    if roll < 0.65:
        return "(" + expression(rng, depth + 1) + ")"
    return expression(rng, depth + 1) + rng.choice([" && ", " || ", "&&", "||", " ", " & ", " | "]) + expression(rng, depth + 1)


def segment(text):
    """A path segment as a client would escape it (http.client sends no space or non-ASCII)."""
    return urllib.parse.quote(text, safe="") or "e"


def header_value(text):
    """What http.client can send as a header: no CR or LF (anything else goes, as bytes)."""
    text = text.replace("\r", "").replace("\n", "")
    return text if text.isascii() else text.encode("utf-8", "surrogatepass")


def time_value(rng):
    base = time.gmtime(time.time() + rng.choice([-86400, 60, 3600, 6 * 86400, 8 * 86400, 10**9]))
    text = time.strftime(rng.choice(["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d'T'%H:%M:%S", "%Y-%m-%dT%H:%M:%S.000Z",
                                     "%Y-%m-%dT%H:%M:%S+01:00", "%Y-%m-%d %H:%M:%S"]), base)
    if rng.random() < 0.6:
        text = mutate_bytes(rng, text.encode(), ["9", ":", "-", "T", ".", "+", "Z", "'", "99", "00", "٣"]).decode("utf-8", "replace")
    return text


# -- the requests --------------------------------------------------------------------------------


def registration(rng):
    body = mutate_xml(rng, rng.choice(seeds()))
    if rng.random() < 0.3:
        return listen, "POST", "/registrations", body, dict(XML), rng.random() < 0.1
    headers = dict(XML)
    if rng.random() < 0.2:
        headers["If-Match"] = header_value(rng.choice(["*", '"1"', 'W/"1"', random_text(rng)]))
    return listen, "PUT", f"/registrations/{segment(rng.choice(POOL + ['fz-r', random_text(rng)[:70]]))}", body, headers, rng.random() < 0.1


def installation_doc(rng):
    doc = wire.installation(tags=["sports"], token=rng.choice(["d1" * 32, "d2" * 32]))
    if rng.random() < 0.4:
        doc["templates"] = {"t": {"body": '{"aps":{"alert":"$(message)"}}', "headers": {"apns-priority": "10"}, "tags": ["a"]}}
    if rng.random() < 0.3:
        doc["userId"] = rng.choice(["alice", "bob", random_text(rng)])
    for _ in range(rng.randrange(0, 4)):
        target = doc
        template = doc.get("templates", {}).get("t") if isinstance(doc.get("templates"), dict) else None
        if isinstance(template, dict) and rng.random() < 0.4:
            target = template
        key = rng.choice(list(target) + ["platform", "pushChannel", "tags", "installationId", "expirationTime", "pushVariables", "x"])
        if rng.random() < 0.2:
            target.pop(key, None)
        else:
            target[key] = random_json(rng)
    if rng.random() < 0.1:
        doc["platform"] = rng.choice(["APNS", "fcmV1", "gcm", "browser", "wns", "Apns "])
    return doc


def installation(rng):
    data = json.dumps(installation_doc(rng)).encode()
    if rng.random() < 0.35:
        data = mutate_bytes(rng, data, ['"', "{", "}", "[", "]", ",", ":", "\\u0000", "\\ud800", "\xff", "NaN", "1e999", "[" * 50])
    target = rng.choice(POOL + ["fz-i", "x" * 65, "a%2Fb", "..", "fz%00"])
    return rng.choice([full, listen]), "PUT", f"/installations/{target}", data, dict(JSON), rng.random() < 0.1


PATHS = ["/tags", "/tags/sports", "/tags/news", "/tags/~1x", "/userId", "/pushChannel", "/templates/t", "/templates/t/body",
         "/templates/t/headers", "/templates/t/tags", "/templates/t/tags/a", "/templates/u", "/platform", "/installationId", "/", "",
         "tags", "/tags/", "//", "/templates", "/templates/t/expiry", "/~0", "/tags/" + "x" * 600]


def patch(rng):
    ops = []
    for _ in range(rng.choice([0, 1, 1, 2, 3, 8, 65])):
        op = {"op": rng.choice(["add", "remove", "replace", "ADD", "move", "copy", "test", "", 5]), "path": rng.choice(PATHS)}
        if rng.random() < 0.2:
            op["path"] = random_text(rng)
        if rng.random() < 0.85:
            op["value"] = rng.choice([random_json(rng), "news", ["a", "b"], '["a","b"]', '{"body":"{}"}', {"body": "{}"}, "alice", "d3" * 32])
        if rng.random() < 0.05:
            op["from"] = "/tags"
        ops.append(op)
    body = ops if rng.random() < 0.95 else {"op": "add"}
    data = json.dumps(body).encode()
    if rng.random() < 0.2:
        data = mutate_bytes(rng, data, ['"', "{", "}", "[", "]", ",", ":", "\\u0000"])
    headers = {"Content-Type": rng.choice(["application/json", "application/json-patch+json"])}
    return rng.choice([full, listen]), "PATCH", f"/installations/{rng.choice(POOL + ['fz-none'])}", data, headers, rng.random() < 0.05


def send(rng):
    fmt = rng.choice(["template", "template", "apple", "apple", "fcmv1", "browser", "gcm", "windows", "", "Template", random_text(rng)])
    headers = {"ServiceBusNotification-Format": header_value(fmt), "Content-Type": "application/json;charset=utf-8"}
    if rng.random() < 0.85:
        tags = expression(rng)
        headers["ServiceBusNotification-Tags"] = header_value(tags if rng.random() < 0.8 else tags * rng.randrange(1, 400))
    path = "/messages"
    roll = rng.random()
    if roll < 0.25:
        path = "/schedulednotifications"
        if rng.random() < 0.9:
            headers["ServiceBusNotification-ScheduleTime"] = header_value(time_value(rng))
    elif roll < 0.35:
        path = rng.choice(["/messages?direct", "/messages?direct=true", "/messages?direct=false"])
        headers["ServiceBusNotification-DeviceHandle"] = header_value(rng.choice([TOKEN, "d1" * 32, random_text(rng), "x" * 3000]))
    elif roll < 0.4:
        path = "/messages?test"
    for name in ("apns-priority", "apns-push-type", "apns-expiration", "apns-collapse-id", "apns-topic", "apns-x"):
        if rng.random() < 0.08:
            headers[name] = header_value(rng.choice(["5", "10", "alert", "background", "0", "-1", "abc", "x" * 300, random_text(rng)]))
    if fmt.lower() == "template":
        body = {"message": random_text(rng)} if rng.random() < 0.6 else random_json(rng)
    elif fmt == "apple":
        body = {"aps": rng.choice([{"alert": random_text(rng)}, {"content-available": 1}, random_json(rng)])} if rng.random() < 0.7 else random_json(rng)
    elif fmt == "fcmv1":
        body = rng.choice([{"message": {"data": {"a": "b"}}}, {"data": {"a": random_text(rng)}}, {"message": {"token": "t"}}, random_json(rng)])
    else:
        body = random_json(rng)
    data = json.dumps(body).encode()
    if rng.random() < 0.25:
        data = mutate_bytes(rng, data, ['"', "{", "}", "\\u0000", "\xff", "[" * 40])
    return full, "POST", path, data, headers, rng.random() < 0.05


def read(rng):
    choices = [
        ("/registrations", {"$top": rng.choice(["1", "0", "101", "-1", "99999999999999999999", "x"]),
                            "continuationtoken": rng.choice(["1", "0", "-1", "x", "9" * 30])}),
        ("/registrations", {"$filter": rng.choice([f"DeviceToken eq '{TOKEN.upper()}'", "ChannelUri eq 'fcm-token-1'", "Tags eq 'a'",
                                                   "DeviceToken eq '" + "'" * 30, random_text(rng), "Endpoint eq 'x' and P256DH eq 'y'"])}),
        (f"/tags/{segment(rng.choice(['sports', 'x' * 200, 'a b', '%00', random_text(rng)[:30]]))}/registrations", {}),
        (f"/registrations/{rng.choice(POOL + ['none', 'x' * 65])}", {}),
        (f"/installations/{rng.choice(POOL + ['none', 'x' * 65])}", {}),
        (f"/messages/{rng.choice(['1', '0', '-1', '99999999999999999999', 'x', '1.5'])}", {}),
    ]
    path, query = rng.choice(choices)
    if query:
        path += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    method = "DELETE" if rng.random() < 0.15 and path.startswith(("/registrations/", "/installations/fz-r")) else "GET"
    if rng.random() < 0.05:
        method, path = "DELETE", f"/schedulednotifications/{rng.choice(['1', 'x', '99999999999999999999'])}"
    return full, method, path, None, {}, False


def token(rng):
    """A valid request under a mutated SharedAccessSignature token."""
    good = full.token(expiry=int(time.time()) + rng.choice([3600, -10, 10**10]))
    roll = rng.random()
    if roll < 0.4:
        mutated = mutate_bytes(rng, good.encode(), ["&", "=", "%", "sr=", "sig=", "se=", "skn=", "%3D", "+", "/", " "]).decode("latin-1")
    elif roll < 0.6:
        scheme, fields = good.split(" ", 1)
        parts = fields.split("&")
        rng.shuffle(parts)
        mutated = scheme + " " + "&".join(parts + ([rng.choice(parts)] if rng.random() < 0.3 else []))
    elif roll < 0.8:
        mutated = full.token(uri=rng.choice([full.base + "/", full.base + "/SHOP", full.base + "/shop/messages", full.base + "/news",
                                             "sb://127.0.0.1/shop", full.base + "/shop/" + "x" * 2000]))
    else:
        mutated = full.token(key_name=rng.choice(["DefaultListenSharedAccessSignature", "", "x" * 300, random_text(rng) or "n"]))
    return full, "POST", "/messages", b'{"message":"m"}', {"ServiceBusNotification-Format": "template", "Authorization": header_value(mutated)}, False


KINDS = [(registration, 25), (installation, 20), (patch, 20), (send, 25), (read, 5), (token, 5)]


def draw(number):
    rng = random.Random(f"{seed}:{number}")
    kind = rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]
    hub, method, path, body, headers, chunked = kind(rng)
    return kind.__name__, hub, method, path, body[:70000] if body else body, headers, chunked  # a little over 64 KiB at most


# -- checks --------------------------------------------------------------------------------------

passed = failed = 0


def problems_of(answer):
    found = []
    if answer.status == 0:
        return [f"no answer: {answer.error}"]
    if answer.elapsed > 5:
        found.append(f"answered after {answer.elapsed:.1f} s")
    if answer.status >= 500 and mode == "up":
        found.append(f"status {answer.status}")
    if answer.status >= 400 and answer.body:
        problem = wire.nh_error_problem(answer)
        if problem:
            found.append(problem)
    elif answer.status >= 400 and answer.status not in (400, 413, 431):
        found.append(f"status {answer.status} with no body (only the HTTP layer's 400/413/431 come bare)")
    for key, what in KEYS.items():
        if key in answer.text:
            found.append(f"the answer holds {what}")
    found += [f"the answer holds /etc/passwd's {line[:20]!r}" for line in PASSWD if line in answer.text]
    return found


def report(number, kind, hub, method, path, body, headers, answer, found):
    global failed
    failed += 1
    shown = {k: (v if k != "Authorization" else "[token]") for k, v in headers.items()}
    replay = f"\n      replay:   FUZZ_NH_SEED={seed} FUZZ_NH_ONLY={number} (scripts/fuzz/nh.py)" if number is not None else ""
    print(f"nh FAIL {'#' + str(number) + ' ' if number is not None else ''}{kind}: {'; '.join(found)}\n"
          f"      request:  {method} /{hub.hub}{path} {shown} body {body[:160]!r}"
          f"{' (chunked)' if chunked_of.get(number) else ''}{f' ({len(body)} bytes)' if body and len(body) > 160 else ''}\n"
          f"      answer:   {answer.brief(300)}{replay}", flush=True)
    if out_dir and body and number is not None:
        with open(os.path.join(out_dir, f"nh-{number}.body"), "wb") as file:
            file.write(body)


chunked_of = {}


def run_up():
    global passed
    for doc_id in POOL:
        answer = full.request("PUT", f"/installations/{doc_id}", wire.installation(token=f"{POOL.index(doc_id):02d}" * 32), JSON, keep=True)
        if answer.status != 200:
            print(f"nh FAIL setup: PUT installation {doc_id}: {answer.brief()}")
            return False
    numbers = [int(only)] if only else range(count)
    started = time.monotonic()
    statuses = {}
    for number in numbers:
        kind, hub, method, path, body, headers, chunked = draw(number)
        chunked_of[number] = chunked
        auth = headers.pop("Authorization", "sign")
        answer = hub.request(method, path, body, headers, auth=auth, keep=True, chunked=chunked and bool(body))
        statuses[answer.status] = statuses.get(answer.status, 0) + 1
        found = problems_of(answer)
        if found:
            report(number, kind, hub, method, path, body or b"", {**headers, "Authorization": auth}, answer, found)
        else:
            passed += 1
        if (number + 1) % 100 == 0:
            print(f"nh: {number + 1} requests in {time.monotonic() - started:.1f} s", flush=True)
    print("nh: statuses " + "  ".join(f"{status or 'none'}x{n}" for status, n in sorted(statuses.items())))
    # Still serving: a valid installation and a valid send. The installation's token is one no
    # request above sent: a mutated installation with a userId may hold the seeds' token, and a
    # token another user's installation holds is rightly a 409.
    last = wire.installation(token=os.urandom(32).hex())
    for what, answer, status in (("a valid installation after the fuzzing", full.request("PUT", "/installations/fz-last", last, JSON), 200),
                                 ("a valid send after the fuzzing", full.request("POST", "/messages", {"message": "m"}, {
                                     "ServiceBusNotification-Format": "template", "ServiceBusNotification-Tags": "fz-nobody"}), 201)):
        if answer.status == status:
            passed += 1
        else:
            report(None, what, full, "", "", b"", {}, answer, [f"expected {status}"])
    return True


def run_down():
    """Redis stopped: every kind of request is NH's 503 with Retry-After, never a 500."""
    global passed
    requests = [
        ("a send", full, "POST", "/messages", b'{"message":"m"}', {"ServiceBusNotification-Format": "template"}),
        ("a registration", listen, "PUT", "/registrations/fz-down", seeds()[0].encode(), XML),
        ("an installation", full, "PUT", "/installations/fz-down", json.dumps(wire.installation()).encode(), JSON),
        ("a patch", full, "PATCH", "/installations/fz-1", b'[{"op":"add","path":"/tags","value":"a"}]', JSON),
        ("a read", full, "GET", "/installations/fz-1", None, {}),
    ]
    for what, hub, method, path, body, headers in requests:
        answer = hub.request(method, path, body, headers)
        found = [] if answer.status == 503 else [f"expected 503 (Redis is stopped), got {answer.status}"]
        if answer.status == 503 and not answer.header("Retry-After"):
            found.append("no Retry-After")
        if answer.status and answer.body and wire.nh_error_problem(answer):
            found.append(wire.nh_error_problem(answer))
        if found:
            report(None, f"{what} with Redis stopped", hub, method, path, body or b"", headers, answer, found)
        else:
            passed += 1
            print(f"nh ok   {what} with Redis stopped: 503")


if mode == "up":
    print(f"nh fuzz (up): seed {seed} (FUZZ_NH_SEED={seed} repeats it), {f'request {only}' if only else f'{count} requests'}", flush=True)
else:
    print("nh fuzz (down): each kind of request once, Redis stopped", flush=True)
if mode == "up":
    if not run_up():
        failed += 1
else:
    run_down()
full.close()
listen.close()
print(f"nh fuzz ({mode}): {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
