"""Azure Notification Hubs' interface (`richpush api --nh-port`, over TLS with the run's own
certificate), hostile: hubs `shop` and `news` with NH's two default rules, their connection strings
given by scripts/security.sh (SEC_NH_*). Each refusal is checked for NH's status, NH's
`<Error><Code>…</Code><Detail>…</Detail></Error>` body, the code it names, and for what it must not
hold: no key of any rule, no signature the server expected, nothing of /etc/passwd.

- SAS refusals: no Authorization header, another scheme, malformed tokens (401); a wrong key and
  an unknown key name, answered alike, word for word (401 InvalidSignature); an expired `se`
  (401 ExpiredToken); a Listen rule sending or listing (403 InsufficientClaims); hub news's key on
  hub shop, and shop's key signing news's URI, another host or a prefix of the hub's name (401); a
  hub that does not exist (401, as a wrong key). SEC_TIMING=1 adds the timing of an unknown key
  name against a wrong key (opt-in, as cases_timing.py).
- Hostile registrations (Atom XML, NH's PUT and POST): DOCTYPEs with external entities (a file,
  a parameter entity, an external DTD, an http URL that a local socket watches: never fetched),
  billion laughs (ten levels), a DOCTYPE inside an element, an undefined entity, nesting past 16
  levels, more than 512 elements or 16 attributes, a processing instruction, truncated and
  malformed documents, bytes that are not UTF-8 (400); over 64 KiB (413).
- Hostile installations (JSON) and JSON Patch: deep nesting, huge arrays, wrong types, bodies that
  are not JSON or not UTF-8 (400), over 64 KiB (413); patches with ops NH does not serve, bad
  paths, missing values, too many operations (400), a refused patch changing nothing.
- Bodies over 64 KiB sent chunked (no Content-Length): 413 on every route that reads a body.
- Send headers: ServiceBusNotification-Tags oversized (past the tag-expression limit, past the
  server's header limit) or malformed, ServiceBusNotification-Format missing or unknown,
  ServiceBusNotification-ScheduleTime malformed, beyond 7 days or naming no such day (400).
- Last, the listener still answers, from the same API process as before the first NH case.
"""
import base64
import html
import json
import os
import socket
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nh"))

import wire  # noqa: E402
from wire import apple, entry  # noqa: E402

XML = {"Content-Type": "application/atom+xml;type=entry;charset=utf-8"}
JSON = {"Content-Type": "application/json"}
TEMPLATE = {"ServiceBusNotification-Format": "template", "Content-Type": "application/json;charset=utf-8",
            "ServiceBusNotification-Tags": "sec-nobody"}


def passwd_lines():
    """Lines of /etc/passwd an answer must not echo (an XXE that worked would)."""
    try:
        with open("/etc/passwd") as file:
            lines = [line for line in file.read().splitlines() if len(line) >= 12]
    except OSError:
        lines = []
    return ["root:x:0:0", *lines[:40]]


PASSWD = passwd_lines()


class NH:
    """The run's hubs: shop's Full and Listen keys, news's Full key, each a wire.Hub."""

    def __init__(self, ctx):
        env = os.environ
        self.ca = env["SEC_NH_CA"]
        self.full = wire.Hub(env["SEC_NH_FULL"], "shop", self.ca)
        self.listen = wire.Hub(env["SEC_NH_LISTEN"], "shop", self.ca)
        self.other = wire.Hub(env["SEC_NH_OTHER"], "news", self.ca)
        self.keys = {self.full.key: "shop's Full key", self.listen.key: "shop's Listen key", self.other.key: "news's Full key"}
        for key, what in self.keys.items():
            ctx.secret(key, f"NH {what}")
        self.api_pid = ctx.api.pid()
        self.serial = 0

    def id(self, prefix):
        self.serial += 1
        return f"{prefix}-{self.serial}"


def nh(ctx, t):
    if not hasattr(ctx, "nh"):
        t.need(t.expect("the NH listener", os.environ.get("SEC_NH_PORT"), "started by scripts/security.sh (SEC_NH_PORT)", "none"))
        ctx.nh = NH(ctx)
    return ctx.nh


def leaks(ctx, answer, secrets=()):
    """What an answer holds that it must not: a key, an expected signature, /etc/passwd."""
    found = []
    text = answer.text
    for key, what in ctx.nh.keys.items():
        if key in text or key.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D") in text:
            found.append(what)
    for secret, what in secrets:
        if secret and secret in text:
            found.append(what)
    found += [f"/etc/passwd line {line[:30]!r}" for line in PASSWD if line in text]
    return found


def expected_signatures(hub, token):
    """The signatures the server could compute for `token`'s sr and se with each real key (what a
    leaky answer would show: base64, URL-escaped, hex)."""
    fields = dict(part.split("=", 1) for part in token.split(" ", 1)[1].split("&") if "=" in part)
    sig = wire.signature(fields.get("sr", ""), fields.get("se", "0"), hub.key)
    return [(sig, "the expected signature"), (sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"), "the expected signature (escaped)"),
            (base64.b64decode(sig).hex(), "the expected signature (hex)")]


def refused(ctx, t, what, answer, status, code=None, words=None, secrets=()):
    """Checks one refusal: the exact status, NH's error body, the code and words it names, no leak."""
    if answer.status != status:
        return t.fail(f"{what}: expected {status}{' ' + code if code else ''}, got {answer.brief()}")
    problem = wire.nh_error_problem(answer)
    if problem:
        return t.fail(f"{what}: {problem}")
    if code and answer.error_code() != code:
        return t.fail(f"{what}: expected code {code}, got {answer.brief()}")
    if words and words not in html.unescape(answer.text):
        return t.fail(f"{what}: expected the answer to name {words!r}, got {answer.brief()}")
    found = leaks(ctx, answer, secrets)
    if found:
        return t.fail(f"{what}: the answer holds {', '.join(found)}: {answer.brief(300)}")
    return True


def accepted(t, what, answer, status):
    return t.expect(what, answer.status == status, str(status), answer.brief())


def wrong(key):
    """Another key: the first character changed."""
    return ("y" if key[0] == "x" else "x") + key[1:]


def detail(answer):
    """The refusal's Detail without its TrackingId (differs per request)."""
    text = answer.text
    return text[text.find("<Detail>") + 8:text.rfind(" TrackingId:")] if "<Detail>" in text else text


# -- SAS -----------------------------------------------------------------------------------------


def send(hub, auth="sign", path="/messages", **kw):
    return hub.request("POST", path, {"message": "m"}, TEMPLATE, auth=auth, **kw)


def sas_control(ctx, t):
    hubs = nh(ctx, t)
    t.need(accepted(t, "shop's Full key sends (a template to tag sec-nobody)", send(hubs.full), 201))
    accepted(t, "a token for the namespace (https://host/) sends too", send(hubs.full, hubs.full.token(uri=hubs.full.base + "/")), 201)
    accepted(t, "the Listen key puts an installation", hubs.listen.request("PUT", "/installations/sec-ctl", wire.installation(), JSON), 200)


def sas_missing(ctx, t):
    hubs = nh(ctx, t)
    refused(ctx, t, "no Authorization header", send(hubs.full, auth=None), 401, "MissingToken")
    for header in ("Basic YWxpY2U6cHc=", "Bearer x", "SharedAccessSignature", ""):
        refused(ctx, t, f"Authorization: {header!r}", send(hubs.full, auth=header), 401, "MissingToken")
    refused(ctx, t, "the scheme in lower case, a made-up token", send(hubs.full, auth="sharedaccesssignature sr=a&sig=b&se=1&skn=c"), 401)


def sas_malformed(ctx, t):
    hubs = nh(ctx, t)
    good = hubs.full.token()
    fields = dict(part.split("=", 1) for part in good.split(" ", 1)[1].split("&"))

    def token(**change):
        merged = {**fields, **change}
        return "SharedAccessSignature " + "&".join(f"{k}={v}" for k, v in merged.items() if v is not None)

    cases = [
        ("not name=value", "SharedAccessSignature garbage", "MalformedToken"),
        ("sr missing", token(sr=None), "MalformedToken"),
        ("sig missing", token(sig=None), "MalformedToken"),
        ("se missing", token(se=None), "MalformedToken"),
        ("skn missing", token(skn=None), "MalformedToken"),
        ("an unknown field", token(foo="bar"), "MalformedToken"),
        ("se twice", good + "&se=" + fields["se"], "MalformedToken"),
        ("se not digits", token(se="12ab"), "MalformedToken"),
        ("se of 13 digits", token(se="9" * 13), "MalformedToken"),
        ("se negative", token(se="-1"), "MalformedToken"),
        ("sig not base64", token(sig="!!!!"), "MalformedToken"),
        ("sig of 16 bytes", token(sig="AAAAAAAAAAAAAAAAAAAAAA%3D%3D"), "MalformedToken"),
        ("skn empty", token(skn=""), "MalformedToken"),
        ("skn of 300 bytes", token(skn="k" * 300), "MalformedToken"),
        ("a token over 4096 bytes", token(sr="a" * 5000), "MalformedToken"),
        ("bytes that are not UTF-8 after skn", good.encode() + b"\xff\xfe", None),
    ]
    for what, header, code in cases:
        answer = send(hubs.full, auth=header)
        refused(ctx, t, f"token with {what}", answer, 401, code, secrets=expected_signatures(hubs.full, good))


def sas_wrong_key_and_name(ctx, t):
    """A wrong key, an unknown key name, news's key: the same answer, word for word, holding no
    key and not the signature the server expected."""
    hubs = nh(ctx, t)
    t.need(accepted(t, "control: the right key", send(hubs.full), 201))
    wrong_key = hubs.full.token(key=wrong(hubs.full.key))
    wrong_name = hubs.full.token(key_name="NoSuchRule")
    other_key = hubs.other.token(uri=f"{hubs.full.base}/shop")
    listen_name_full_key = hubs.full.token(key_name=hubs.listen.key_name)  # Listen's name, Full's key
    answers = {}
    for what, token in (("a wrong key", wrong_key), ("an unknown key name", wrong_name), ("hub news's key on shop", other_key),
                        ("the Listen rule's name with the Full rule's key", listen_name_full_key)):
        answer = send(hubs.full, auth=token)
        if refused(ctx, t, what, answer, 401, "InvalidSignature", secrets=expected_signatures(hubs.full, token)):
            answers[what] = detail(answer)
            for name in (hubs.full.key_name, hubs.listen.key_name):
                t.expect(f"{what}: the answer names no rule", name not in answer.text, f"no {name}", answer.brief())
    t.expect("the refusals' details", len(set(answers.values())) <= 1, "one and the same (nothing tells a wrong key from an unknown name)",
             answers)


def sas_expired(ctx, t):
    hubs = nh(ctx, t)
    now = int(time.time())
    for what, expiry in (("expired a minute ago", now - 60), ("se=0", 0), ("expired a second ago", now - 1)):
        token = hubs.full.token(expiry=expiry)
        refused(ctx, t, f"a token {what}", send(hubs.full, auth=token), 401, "ExpiredToken",
                secrets=expected_signatures(hubs.full, token))
    accepted(t, "control: the same key, se a minute ahead", send(hubs.full, auth=hubs.full.token(expiry=now + 60)), 201)


def sas_listen_sends(ctx, t):
    hubs = nh(ctx, t)
    refused(ctx, t, "the Listen rule sends", send(hubs.listen), 403, "InsufficientClaims", words="Send")
    refused(ctx, t, "the Listen rule schedules a send",
            hubs.listen.request("POST", "/schedulednotifications", {"message": "m"},
                                {**TEMPLATE, "ServiceBusNotification-ScheduleTime": "2030-01-01T00:00:00Z"}), 403, "InsufficientClaims")
    refused(ctx, t, "the Listen rule lists every registration", hubs.listen.request("GET", "/registrations"), 403, "InsufficientClaims",
            words="Manage")
    refused(ctx, t, "the Listen rule reads an outcome", hubs.listen.request("GET", "/messages/1"), 403, "InsufficientClaims")


def sas_other_uri(ctx, t):
    """shop's own key, signing a URI that is not shop's: 401 InvalidAudience."""
    hubs = nh(ctx, t)
    base = hubs.full.base
    for what, uri in (("hub news's URI", f"{base}/news"), ("news's messages", f"{base}/news/messages"),
                      ("another host", "https://evil.example/shop"), ("another port", f"https://{hubs.full.host}:1/shop"),
                      ("a prefix of the hub's name", f"{base}/sh"), ("the hub's name and more", f"{base}/shopping"),
                      ("http://", f"http://{hubs.full.host}:{hubs.full.port}/shop"), ("no scheme", f"{hubs.full.host}:{hubs.full.port}/shop")):
        token = hubs.full.token(uri=uri)
        refused(ctx, t, f"shop's key signing {what}", send(hubs.full, auth=token), 401, "InvalidAudience",
                secrets=expected_signatures(hubs.full, token))


def sas_unknown_hub(ctx, t):
    hubs = nh(ctx, t)
    wrong_key = send(hubs.full, auth=hubs.full.token(key=wrong(hubs.full.key)))
    for hub in ("nohub", "x" * 300, "shop%00", "shop.x"):
        token = hubs.full.token(uri=f"{hubs.full.base}/{hub}")
        answer = hubs.full.request("POST", f"/{hub}/messages?api-version=2015-01", {"message": "m"}, TEMPLATE, auth=token, hub_path=False)
        if refused(ctx, t, f"hub {hub[:20]!r} (no such hub), shop's key", answer, 401, "InvalidSignature"):
            t.expect(f"hub {hub[:20]!r}: answered as a wrong key", detail(answer) == detail(wrong_key), detail(wrong_key), detail(answer))


def sas_timing(ctx, t):
    """Opt-in (SEC_TIMING=1): an unknown key name costs what a wrong key does (both keys of a dummy
    rule are tried): the median of paired differences on one kept-alive TLS connection."""
    hubs = nh(ctx, t)
    samples = int(os.environ.get("SEC_TIMING_SAMPLES", "300"))
    limit = float(os.environ.get("SEC_NH_TIMING_LIMIT_US", "60")) / 1e6
    tokens = {"wrong key": hubs.full.token(key=wrong(hubs.full.key)), "unknown name": hubs.full.token(key_name="NoSuchRule")}
    times = {name: [] for name in tokens}
    for number in range(samples):
        for name in (list(tokens) if number % 2 == 0 else list(reversed(list(tokens)))):
            answer = send(hubs.full, auth=tokens[name], keep=True)
            t.need(t.expect(f"{name}: answer", answer.status == 401, "401", answer.brief()))
            times[name].append(answer.elapsed)
    hubs.full.close()
    paired = statistics.median(a - b for a, b in zip(times["unknown name"], times["wrong key"]))
    t.notes.append(f"medians {statistics.median(times['unknown name']) * 1e6:.0f} µs unknown name vs "
                   f"{statistics.median(times['wrong key']) * 1e6:.0f} µs wrong key (paired {paired * 1e6:+.1f} µs)")
    t.expect("median paired difference, unknown key name vs wrong key", abs(paired) <= limit, f"within {limit * 1e6:.0f} µs",
             f"{paired * 1e6:+.1f} µs")


# -- registrations (XML) -------------------------------------------------------------------------


def put_registration(hubs, body, method="PUT", headers=None):
    path = "/registrations" if method == "POST" else f"/registrations/{hubs.id('sec-h')}"
    return hubs.listen.request(method, path, body, {**XML, **(headers or {})})


def xml_refusals(cases, method="PUT"):
    def case(ctx, t):
        hubs = nh(ctx, t)
        t.need(accepted(t, "control: a valid registration", put_registration(hubs, entry(apple()), method), 200))
        for what, body, status, words in cases():
            started = time.monotonic()
            answer = put_registration(hubs, body, method)
            refused(ctx, t, f"{method} {what} ({len(body)} bytes)", answer, status, words=words)
            t.expect(f"{what}: time to answer", time.monotonic() - started < 2, "< 2 s", f"{time.monotonic() - started:.1f} s")
    return case


def xxe_cases():
    return [
        ("DOCTYPE, an entity SYSTEM file:///etc/passwd used in the description", wire.xxe_file(), 400, "document type"),
        ("the same without the XML declaration", wire.xxe_file(declaration=False), 400, "document type"),
        ("a parameter entity SYSTEM file:///etc/passwd", wire.xxe_parameter(), 400, "document type"),
        ("an external DTD, file:///etc/passwd", wire.xxe_external_dtd("file:///etc/passwd"), 400, "document type"),
        ("an entity SYSTEM /etc/passwd in the tags", wire.xxe_in_tags("file:///etc/passwd"), 400, "document type"),
        ("a DOCTYPE inside an element", entry(apple(extra='<!DOCTYPE x [<!ENTITY y SYSTEM "file:///etc/passwd">]>')), 400,
         "not accepted inside elements"),
        ("an entity never defined (&xxe;)", entry(apple(tags="&xxe;")), 400, "no other is defined"),
        ("a processing instruction naming /etc/passwd", '<?xml-stylesheet href="file:///etc/passwd"?>' + entry(apple()), 400,
         "processing instructions"),
    ]


def xxe_not_fetched(ctx, t):
    """DOCTYPEs naming an http URL on a socket this case listens on: 400, and no connection comes."""
    hubs = nh(ctx, t)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.5)
    url = f"http://127.0.0.1:{server.getsockname()[1]}/xxe"
    try:
        for what, body in (("an entity SYSTEM", wire.xxe_in_tags(url)), ("an external DTD", wire.xxe_external_dtd(url)),
                           ("a parameter entity", wire.xxe_parameter().replace("file:///etc/passwd", url))):
            refused(ctx, t, f"{what} naming {url}", put_registration(hubs, body), 400, words="document type")
        try:
            connection, peer = server.accept()
            connection.close()
            t.fail(f"the server fetched {url}: a connection came from {peer}")
        except socket.timeout:
            pass
    finally:
        server.close()


def laughs_cases():
    return [
        ("billion laughs, 10 levels of 10", wire.billion_laughs(10, 10), 400, "document type"),
        ("billion laughs, 30 levels of 2, no XML declaration", wire.billion_laughs(30, 2).split("?>", 1)[1], 400, "document type"),
        ("60 KB of &amp; (predefined entities only)", entry(apple(tags="&amp;" * 12000)), 400, "1 to 120"),
        ("character references to NUL, a surrogate, past U+10FFFF", entry(apple(tags="&#0;&#xD800;&#x110000;")), 400, "no other is defined"),
    ]


def shape_cases():
    return [
        ("17 levels (the limit is 16)", wire.nested(14), 400, "deeper than 16"),
        ("8,000 levels", wire.nested(8000), 400, "deeper than 16"),
        ("8,000 unclosed levels", entry(apple(extra="<a>" * 8000)), 400, "deeper than 16"),
        ("513 elements (the limit is 512)", wire.many_elements(510), 400, "more than 512 elements"),
        ("10,000 elements", wire.many_elements(10000), 400, "more than 512 elements"),
        ("17 attributes (the limit is 16)", wire.many_attributes(15), 400, "more than 16 attributes"),
        ("a name of 300 bytes", entry(apple(extra="<" + "n" * 300 + "/>")), 400, "a name was expected"),
    ]


def broken_cases():
    valid = entry(apple())
    cases = [(f"cut at byte {cut} of {len(valid)}", valid[:cut], 400, "not XML RichPush reads") for cut in (1, 10, 60, 150, 300, len(valid) - 1)]
    return cases + [
        ("empty", "", 400, "not XML RichPush reads"),
        ("not XML", "hello", 400, "not XML RichPush reads"),
        ("an unclosed CDATA section", entry(apple(tags="<![CDATA[abc")), 400, "CDATA"),
        ("an unclosed comment", "<!-- " + valid, 400, "-->"),
        ("an end tag closing another element", valid.replace("</content>", "</contents>"), 400, "closes"),
        ("two root elements", valid + valid, 400, "after the root element"),
        ("Latin-1 bytes", entry(apple(tags="caf\xe9")).encode("latin-1"), 400, "not UTF-8"),
        ("an overlong UTF-8 '/' (C0 AF)", valid.encode().replace(b"sports", b"sp\xc0\xafrts"), 400, "not UTF-8"),
        ("UTF-16 with a byte order mark", valid.encode("utf-16"), 400, "not XML RichPush reads"),
        ("a lone surrogate encoded (ED A0 80)", valid.encode().replace(b"sports", b"sp\xed\xa0\x80rts"), 400, "not UTF-8"),
    ]


def xml_oversized(ctx, t):
    hubs = nh(ctx, t)
    big = entry(apple(extra="<!--" + "x" * 66000 + "-->"))
    refused(ctx, t, f"PUT of {len(big)} bytes (Content-Length)", put_registration(hubs, big), 413)
    refused(ctx, t, f"POST of {len(big)} bytes (Content-Length)", put_registration(hubs, big, "POST"), 413)
    head = (f"PUT /shop/registrations/sec-big?api-version=2015-01 HTTP/1.1\r\nHost: {hubs.listen.host}:{hubs.listen.port}\r\n"
            "Content-Length: 10000000000\r\n"
            f"Authorization: {hubs.listen.token()}\r\n\r\n")
    answer = raw_tls(hubs.listen, head.encode())
    t.expect("Content-Length: 10000000000 and no body", answer.status == 413, "413", answer.brief())


def raw_tls(hub, data, timeout=5.0):
    """One request written as bytes on a TLS connection; the status of what comes back."""
    started = time.monotonic()
    try:
        with socket.create_connection((hub.host, hub.port), timeout=timeout) as plain:
            with hub.context.wrap_socket(plain, server_hostname=hub.host) as sock:
                sock.sendall(data)
                got = b""
                while b"\r\n\r\n" not in got:
                    piece = sock.recv(65536)
                    if not piece:
                        break
                    got += piece
    except OSError as error:
        return wire.Answer(0, elapsed=time.monotonic() - started, error=f"{type(error).__name__}: {error}")
    line = got.split(b"\r\n", 1)[0].decode("latin-1")
    status = int(line.split()[1]) if line.startswith("HTTP/") and len(line.split()) > 1 else 0
    return wire.Answer(status, body=got.split(b"\r\n\r\n", 1)[-1], elapsed=time.monotonic() - started,
                       error=None if status else f"no HTTP answer: {got[:80]!r}")


# -- installations (JSON) and JSON Patch ---------------------------------------------------------


def json_refusals(ctx, t):
    hubs = nh(ctx, t)
    ok = wire.installation()
    t.need(accepted(t, "control: a valid installation", hubs.full.request("PUT", "/installations/sec-j", ok, JSON), 200))
    cases = [
        ("arrays 30,000 deep", wire.deep_json(30000), "nested at most 6"),
        ("objects 6,000 deep", wire.deep_json(6000, "object"), "nested at most 6"),
        ("a template's headers 7 levels deep", {**ok, "templates": {"t": {"body": "{}", "headers": {"a": {"b": {"c": {"d": 1}}}}}}},
         "nested at most 6"),
        ("61 tags (NH's limit is 60)", wire.installation(tags=[f"t{n}" for n in range(61)]), "up to 60"),
        ("20,000 numbers as tags", wire.installation(tags=[0] * 20000), "up to 60"),
        ("a tag of 121 characters", wire.installation(tags=["t" * 121]), "120"),
        ("a tag with a space", wire.installation(tags=["a b"]), "tag"),
        ("platform a number", {**ok, "platform": 5}, "platform"),
        ("platform wns", {**ok, "platform": "wns"}, "not served"),
        ("tags a string", {**ok, "tags": "sports"}, "tags"),
        ("pushChannel missing", {"platform": "apns", "tags": []}, "pushChannel"),
        ("pushChannel an array", {**ok, "pushChannel": ["a"]}, "pushChannel"),
        ("a JSON array", [ok], "JSON object"),
        ("NaN", '{"platform":"apns","pushChannel":"t","tags":[NaN]}', "JSON object"),
        ("a lone surrogate escape", '{"platform":"apns","pushChannel":"t","tags":["\\ud800"]}', "JSON object"),
        ("bytes that are not UTF-8", b'{"platform":"apns","pushChannel":"\xff\xfe"}', "JSON object"),
        ("trailing garbage", '{"platform":"apns","pushChannel":"t"} x', "JSON object"),
        ("truncated", '{"platform":"apns","pushChannel":"t', "JSON object"),
        ("empty", "", "JSON object"),
        ("1e999999 as a tag", '{"platform":"apns","pushChannel":"t","tags":[1e999999]}', "tags"),
    ]
    for what, body, words in cases:
        answer = hubs.full.request("PUT", f"/installations/{hubs.id('sec-j')}", body, JSON)
        refused(ctx, t, f"PUT installation: {what}", answer, 400, words=words)


def json_oversized(ctx, t):
    hubs = nh(ctx, t)
    big = wire.installation(pad="x" * 70000)
    refused(ctx, t, "PUT installation of 70 KB (Content-Length)", hubs.full.request("PUT", "/installations/sec-big", big, JSON), 413)
    refused(ctx, t, "PATCH of 70 KB (Content-Length)",
            hubs.full.request("PATCH", "/installations/sec-j", [{"op": "add", "path": "/tags", "value": "x" * 70000}], JSON), 413)
    refused(ctx, t, "an apple send of 70 KB (Content-Length)",
            hubs.full.request("POST", "/messages", {"aps": {"alert": "x" * 70000}}, {**TEMPLATE, "ServiceBusNotification-Format": "apple"}), 413)
    refused(ctx, t, "a template send of 70 KB (Content-Length)", hubs.full.request("POST", "/messages", {"m": "x" * 70000}, TEMPLATE), 413)


def chunked_oversized(ctx, t):
    """Over 64 KiB with no Content-Length (chunked): NH's 413 on every route that reads a body."""
    hubs = nh(ctx, t)
    pad = "x" * 70000
    routes = [
        ("PUT registration", hubs.listen, "PUT", "/registrations/sec-chunked", entry(apple(extra="<!--" + pad + "-->")), XML),
        ("POST registration", hubs.listen, "POST", "/registrations", entry(apple(extra="<!--" + pad + "-->")), XML),
        ("PUT installation", hubs.full, "PUT", "/installations/sec-chunked", wire.installation(pad=pad), JSON),
        ("PATCH installation", hubs.full, "PATCH", "/installations/sec-j", [{"op": "add", "path": "/tags", "value": pad}], JSON),
        ("apple send", hubs.full, "POST", "/messages", {"aps": {"alert": pad}}, {**TEMPLATE, "ServiceBusNotification-Format": "apple"}),
        ("template send", hubs.full, "POST", "/messages", {"m": pad}, TEMPLATE),
    ]
    for what, hub, method, path, body, headers in routes:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        answer = hub.request(method, path, data, headers, chunked=True)
        refused(ctx, t, f"{what}, {len(data)} bytes chunked", answer, 413)
    t.expect("control: a chunked installation under the limit", hubs.full.request(
        "PUT", "/installations/sec-chunked-small", wire.installation(), JSON, chunked=True).status == 200, "200", "see above")


def patch_refusals(ctx, t):
    hubs = nh(ctx, t)
    t.need(accepted(t, "control: put sec-p", hubs.full.request("PUT", "/installations/sec-p", wire.installation(tags=["sports"]), JSON), 200))
    t.need(accepted(t, "control: a valid patch", hubs.full.request(
        "PATCH", "/installations/sec-p", [{"op": "add", "path": "/tags", "value": "news"}], JSON), 200))
    deep = {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}
    cases = [
        ("op move", [{"op": "move", "path": "/tags", "value": "a"}], "not served"),
        ("op copy", [{"op": "copy", "path": "/tags", "value": "a"}], "not served"),
        ("op test", [{"op": "test", "path": "/tags", "value": "a"}], "not served"),
        ("op ''", [{"op": "", "path": "/tags", "value": "a"}], "not served"),
        ("op a number", [{"op": 5, "path": "/tags", "value": "a"}], "'op'"),
        ("no op", [{"path": "/tags", "value": "a"}], "'op'"),
        ("no path", [{"op": "add", "value": "a"}], "'path'"),
        ("a 'from' field", [{"op": "add", "path": "/tags", "value": "a", "from": "/tags"}], "unknown field"),
        ("path without '/'", [{"op": "add", "path": "tags", "value": "a"}], "JSON Pointer"),
        ("path '/'", [{"op": "add", "path": "/", "value": "a"}], "not one NH patches"),
        ("path /platform", [{"op": "replace", "path": "/platform", "value": "fcmv1"}], "not one NH patches"),
        ("path /installationId", [{"op": "replace", "path": "/installationId", "value": "other"}], "not one NH patches"),
        ("path /templates", [{"op": "add", "path": "/templates", "value": {}}], "not one NH patches"),
        ("path /tags/a/b", [{"op": "add", "path": "/tags/a/b", "value": "a"}], "not one NH patches"),
        ("path of 600 bytes", [{"op": "add", "path": "/" + "a" * 600, "value": "a"}], "512 bytes"),
        ("path /templates/none/body (no such template)", [{"op": "add", "path": "/templates/none/body", "value": "{}"}], "no template"),
        ("add without a value", [{"op": "add", "path": "/tags"}], "needs a 'value'"),
        ("replace one tag", [{"op": "replace", "path": "/tags/sports", "value": "a"}], "not one tag"),
        ("a value 7 levels deep", [{"op": "add", "path": "/templates/t", "value": deep}], "nested at most 6"),
        ("61 tags in one add", [{"op": "add", "path": "/tags", "value": [f"t{n}" for n in range(61)]}], "up to 60"),
        ("remove /pushChannel", [{"op": "remove", "path": "/pushChannel"}], "pushChannel"),
        ("a userId NH's rule refuses", [{"op": "add", "path": "/userId", "value": "bad user!"}], "userId"),
        ("an object, not an array", {"op": "add", "path": "/tags", "value": "a"}, "JSON Patch"),
        ("no operation", [], "1 to 64 operations"),
        ("65 operations", [{"op": "add", "path": "/tags", "value": "a"}] * 65, "1 to 64 operations"),
        ("1,000 operations", [{"op": "add", "path": "/tags", "value": "a"}] * 1000, "1 to 64 operations"),
        ("a valid add, then op move", [{"op": "add", "path": "/tags", "value": "sec-half"}, {"op": "move", "path": "/tags"}], "not served"),
        ("a valid add, then 61 tags", [{"op": "add", "path": "/tags", "value": "sec-half"},
                                       {"op": "add", "path": "/tags", "value": [f"u{n}" for n in range(61)]}], "up to 60"),
    ]
    for what, body, words in cases:
        refused(ctx, t, f"PATCH {what}", hubs.full.request("PATCH", "/installations/sec-p", body, JSON), 400, words=words)
    got = hubs.full.request("GET", "/installations/sec-p")
    tags = json.loads(got.body).get("tags") if got.status == 200 else None
    t.expect("sec-p's tags after the refused patches (none applied, not even in part)", sorted(tags or []) == ["news", "sports"], ["news", "sports"],
             tags if tags is not None else got.brief())
    refused(ctx, t, "PATCH of an installation that does not exist", hubs.full.request(
        "PATCH", "/installations/sec-none", [{"op": "add", "path": "/tags", "value": "a"}], JSON), 404, "InstallationNotFound")


# -- send headers --------------------------------------------------------------------------------


def tags_refusals(ctx, t):
    hubs = nh(ctx, t)
    t.need(accepted(t, "control: a send to 'a || b'", hubs.full.request("POST", "/messages", {"m": "x"},
                                                                         {**TEMPLATE, "ServiceBusNotification-Tags": "a || b"}), 201))
    cases = [
        ("9 KB of 'a||'", "a||" * 3000 + "a", "at most 4096"),
        ("60 KB of 'a||'", "a||" * 20000 + "a", "at most 4096"),
        ("21 tags joined by ||", "||".join(f"t{n}" for n in range(21)), "at most 20"),
        ("a tag of 200 characters", "x" * 200, "1 to 120"),
        ("2,000 '!'", "!" * 2000 + "a", "operators"),
        ("40 parentheses deep", "(" * 40 + "a" + ")" * 40, "nest deeper"),
        ("'a &&'", "a &&", "ends where a tag"),
        ("'(a'", "(a", "missing"),
        ("'a)'", "a)", "unexpected"),
        ("'&&'", "&&", "unexpected"),
        ("'a b'", "a b", "unexpected"),
        ("'a||||b'", "a||||b", "unexpected"),
        ("'*'", "*", "leave the header out"),
        ("'$UserId:{' unclosed", "$UserId:{", "implicit tags"),
        ("'$UserId:{}'", "$UserId:{}", "user name"),
        ("'$Other:{x}'", "$Other:{x}", "implicit tags"),
        ("'$InstallationId:{x} && a'", "$InstallationId:{x} && a", "joined with ||"),
        ("an installation id of 100 characters", "$InstallationId:{" + "a" * 100 + "}", "installation id"),
        ("a non-ASCII tag (UTF-8)", "café", "unexpected character"),
    ]
    for what, value, words in cases:
        answer = hubs.full.request("POST", "/messages", {"m": "x"}, {**TEMPLATE, "ServiceBusNotification-Tags": value})
        refused(ctx, t, f"ServiceBusNotification-Tags {what}", answer, 400, words=words)
    # Past the server's header limits: 400 before any route runs (no NH body to check there).
    for what, value in (("100 KB, one header", "a" * 100000), ("a control character", "a\x01b")):
        answer = hubs.full.request("POST", "/messages", {"m": "x"}, {**TEMPLATE, "ServiceBusNotification-Tags": value})
        t.expect(f"ServiceBusNotification-Tags {what}", answer.status == 400, "400", answer.brief())


def format_refusals(ctx, t):
    hubs = nh(ctx, t)
    headers = {key: value for key, value in TEMPLATE.items() if key != "ServiceBusNotification-Format"}
    refused(ctx, t, "no ServiceBusNotification-Format", hubs.full.request("POST", "/messages", {"m": "x"}, headers), 400, words="is required")
    for what, value, code in (("''", "", "UnsupportedFormat"), ("windows", "windows", "UnsupportedFormat"), ("gcm", "gcm", "BadRequest"),
                              ("5,000 bytes", "x" * 5000, "UnsupportedFormat"), ("'template; x'", "template; x", "UnsupportedFormat"),
                              ("a NUL byte", "apple\x00", None)):
        answer = hubs.full.request("POST", "/messages", {"aps": {"alert": "x"}}, {**headers, "ServiceBusNotification-Format": value})
        if code is None:  # the HTTP layer may refuse it first
            t.expect(f"ServiceBusNotification-Format {what}", answer.status == 400, "400", answer.brief())
        else:
            refused(ctx, t, f"ServiceBusNotification-Format {what}", answer, 400, code)
    apple_headers = {**headers, "ServiceBusNotification-Format": "apple"}
    for name, value, words in (("apns-priority", "abc", "5 or 10"), ("apns-expiration", "x" * 300, "seconds since 1970"),
                               ("apns-push-type", "x" * 300, "alert or background"), ("apns-topic", "com.other", "apns-topic")):
        answer = hubs.full.request("POST", "/messages", {"aps": {"alert": "x"}}, {**apple_headers, name: value})
        refused(ctx, t, f"{name}: {value[:20]!r}", answer, 400, words=words)
    for what, fmt, body, words in (("a template send of an array", "template", [1], "properties"),
                                   ("a template send 3,000 objects deep", "template", wire.deep_json(3000, "object"), "properties"),
                                   ("an apple send 1,000 objects deep", "apple", '{"aps":' + wire.deep_json(1000, "object") + "}", "at most 4096"),
                                   ("an apple send of a string", "apple", '"x"', "aps"),
                                   ("an fcmv1 send naming a token", "fcmv1", {"message": {"token": "t"}}, "token")):
        answer = hubs.full.request("POST", "/messages", body, {**headers, "ServiceBusNotification-Format": fmt})
        refused(ctx, t, what, answer, 400, words=words)


def schedule_refusals(ctx, t):
    hubs = nh(ctx, t)
    soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    t.need(accepted(t, f"control: scheduled at {soon}", hubs.full.request(
        "POST", "/schedulednotifications", {"m": "x"}, {**TEMPLATE, "ServiceBusNotification-ScheduleTime": soon}), 201))
    refused(ctx, t, "no ServiceBusNotification-ScheduleTime", hubs.full.request("POST", "/schedulednotifications", {"m": "x"}, TEMPLATE), 400,
            words="ScheduleTime")
    far = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 8 * 86400))
    for what, value, words in (("'tomorrow'", "tomorrow", "ScheduleTime"), ("month 13", "2026-13-01T00:00:00Z", "ScheduleTime"),
                               ("hour 25", "2026-12-08T25:00:00Z", "ScheduleTime"), ("offset +25:00", "2026-12-08T10:00:00+25:00", "ScheduleTime"),
                               ("a date alone", "2026-12-08", "ScheduleTime"), ("an empty fraction", "2026-12-08T10:00:00.Z", "ScheduleTime"),
                               ("full-width digits", "２０２６-12-08T10:00:00Z", "ScheduleTime"), ("50 bytes", "2" * 50, "ScheduleTime"),
                               ("5,000 bytes", "2026-12-08T10:00:00Z" * 250, "ScheduleTime"), (f"8 days ahead ({far})", far, "7 days")):
        answer = hubs.full.request("POST", "/schedulednotifications", {"m": "x"}, {**TEMPLATE, "ServiceBusNotification-ScheduleTime": value})
        refused(ctx, t, f"ServiceBusNotification-ScheduleTime {what}", answer, 400, words=words)


def schedule_no_such_day(ctx, t):
    """A time naming a day no calendar has is no ISO 8601 time (NH, a .NET DateTime, refuses it):
    400, not read as the days after (2025-02-30 as 2025-03-02, then sent now as past)."""
    hubs = nh(ctx, t)
    for value in ("2025-02-30T10:00:00Z", "2025-04-31T10:00:00Z", "2025-02-29T10:00:00Z"):
        answer = hubs.full.request("POST", "/schedulednotifications", {"m": "x"}, {**TEMPLATE, "ServiceBusNotification-ScheduleTime": value})
        refused(ctx, t, f"ServiceBusNotification-ScheduleTime {value}", answer, 400, words="ScheduleTime")


def direct_refusals(ctx, t):
    hubs = nh(ctx, t)
    apple_headers = {"ServiceBusNotification-Format": "apple", "Content-Type": "application/json"}
    for what, path, headers, words in (
            ("a handle of 3,000 bytes", "/messages?direct", {**apple_headers, "ServiceBusNotification-DeviceHandle": "a" * 3000}, "DeviceHandle"),
            ("no handle", "/messages?direct", apple_headers, "DeviceHandle"),
            ("a template", "/messages?direct", {**TEMPLATE, "ServiceBusNotification-DeviceHandle": "a"}, "native send")):
        refused(ctx, t, f"a direct send with {what}", hubs.full.request("POST", path, {"aps": {"alert": "x"}}, headers), 400, words=words)


def still_answers(ctx, t):
    """After every NH case: the same API process, and its listener answering as before."""
    hubs = nh(ctx, t)
    t.expect("the API process", ctx.api.pid() == hubs.api_pid and ctx.api.running(), f"pid {hubs.api_pid}, still running (never restarted)",
             f"pid {ctx.api.pid()}, running: {ctx.api.running()}")
    accepted(t, "PUT an installation", hubs.full.request("PUT", "/installations/sec-last", wire.installation(), JSON), 200)
    accepted(t, "GET it", hubs.full.request("GET", "/installations/sec-last"), 200)
    accepted(t, "a send", send(hubs.full), 201)
    accepted(t, "a registration", put_registration(hubs, entry(apple())), 200)


def listener_problem(ctx):
    """Why the NH listener does not answer (a request without a token must get 401), or None."""
    if not os.environ.get("SEC_NH_PORT"):
        return None
    hub = ctx.nh.full if hasattr(ctx, "nh") else wire.Hub(os.environ["SEC_NH_FULL"], "shop", os.environ["SEC_NH_CA"])
    answer = hub.request("GET", "/installations/x", auth=None)
    return None if answer.status == 401 else f"the NH listener does not answer as before: {answer.brief()}"


CASES = [(name, run, "nh") for name, run in [
    ("nh/sas/control-201", sas_control),
    ("nh/sas/no-token-401", sas_missing),
    ("nh/sas/malformed-token-401", sas_malformed),
    ("nh/sas/wrong-key-or-name-401-alike", sas_wrong_key_and_name),
    ("nh/sas/expired-401", sas_expired),
    ("nh/sas/listen-rule-sends-403", sas_listen_sends),
    ("nh/sas/other-hub-uri-401", sas_other_uri),
    ("nh/sas/unknown-hub-401", sas_unknown_hub),
    *([("nh/sas/timing-unknown-name-vs-wrong-key", sas_timing)] if os.environ.get("SEC_TIMING") == "1" else []),
    ("nh/xml/xxe-400", xml_refusals(xxe_cases)),
    ("nh/xml/xxe-post-400", xml_refusals(xxe_cases, method="POST")),
    ("nh/xml/xxe-url-not-fetched", xxe_not_fetched),
    ("nh/xml/billion-laughs-400", xml_refusals(laughs_cases)),
    ("nh/xml/depth-elements-attributes-400", xml_refusals(shape_cases)),
    ("nh/xml/truncated-malformed-not-utf8-400", xml_refusals(broken_cases)),
    ("nh/xml/oversized-413", xml_oversized),
    ("nh/json/installation-400", json_refusals),
    ("nh/json/oversized-413", json_oversized),
    ("nh/json/patch-400", patch_refusals),
    ("nh/body/chunked-over-64KiB-413", chunked_oversized),
    ("nh/send/tags-header-400", tags_refusals),
    ("nh/send/format-and-body-400", format_refusals),
    ("nh/send/schedule-time-400", schedule_refusals),
    ("nh/send/schedule-time-no-such-day-400", schedule_no_such_day),
    ("nh/send/direct-400", direct_refusals),
    ("nh/still-answers", still_answers),
]]
