"""What the NH scripts share, Python's standard library alone: NH's connection strings and
SharedAccessSignature tokens, requests over the listener's TLS, and the documents (Atom entries,
installations) with the hostile ones built from them. Used by scripts/nh/clients.py (the NH stage),
scripts/security/cases_nh.py (scripts/security.sh) and scripts/fuzz/nh.py (scripts/fuzz.sh).
"""

import base64
import hashlib
import hmac
import http.client
import json
import ssl
import time
import urllib.parse

# -- connection strings and tokens ---------------------------------------------------------------


def parse_connection_string(text):
    """`Endpoint=sb://host:port/;SharedAccessKeyName=…;SharedAccessKey=…` as a dict with `host`,
    `port`, `key_name` and `key` (a key's base64 may end in '=': split on the first one)."""
    fields = dict(part.split("=", 1) for part in text.strip().split(";") if "=" in part)
    endpoint = urllib.parse.urlsplit(fields["Endpoint"])
    return {"host": endpoint.hostname, "port": endpoint.port or 443, "key_name": fields["SharedAccessKeyName"],
            "key": fields["SharedAccessKey"]}


def signature(resource, expiry, key):
    """The base64 HMAC-SHA256 of `resource` (as it goes in `sr`), a newline and `expiry`, keyed
    with the UTF-8 text of `key`: what NH checks."""
    digest = hmac.new(key.encode(), f"{resource}\n{expiry}".encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def sas(uri, key_name, key, expiry=None, lifetime=3600):
    """`SharedAccessSignature sr=…&sig=…&se=…&skn=…` for `uri`, as the Azure SDKs write it (the
    lower-cased URI with upper-case escapes)."""
    expiry = int(time.time()) + lifetime if expiry is None else expiry
    resource = urllib.parse.quote(uri.lower(), safe="")
    sig = urllib.parse.quote(signature(resource, expiry, key), safe="")
    return f"SharedAccessSignature sr={resource}&sig={sig}&se={expiry}&skn={urllib.parse.quote(key_name, safe='')}"


# -- requests ------------------------------------------------------------------------------------


class Answer:
    def __init__(self, status, headers=None, body=b"", elapsed=0.0, error=None):
        self.status = status  # 0: no answer (the connection failed or was closed)
        self.headers = headers or {}
        self.body = body
        self.elapsed = elapsed
        self.error = error

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def header(self, name):
        return next((value for key, value in self.headers.items() if key.lower() == name.lower()), None)

    def error_code(self):
        """The code an NH refusal names (`<Detail>Code: message …</Detail>`), or None."""
        start = self.text.find("<Detail>")
        if start < 0:
            return None
        detail = self.text[start + 8:]
        return detail.split(":", 1)[0] if ":" in detail else None

    def brief(self, limit=200):
        if self.status == 0:
            return f"no answer ({self.error}) after {self.elapsed:.1f}s"
        text = self.text[:limit]
        return f"{self.status} {text!r}" + ("…" if len(self.body) > limit else "")


class Hub:
    """One hub of the listener as one rule's key sees it: `request` signs with that key unless
    told otherwise (`auth=None`: no Authorization header; a string: that header as it is)."""

    def __init__(self, connection_string, hub, ca_file, timeout=10.0):
        parsed = parse_connection_string(connection_string)
        self.host, self.port, self.key_name, self.key = parsed["host"], parsed["port"], parsed["key_name"], parsed["key"]
        self.hub = hub
        self.timeout = timeout
        self.context = ssl.create_default_context(cafile=ca_file)
        self.connection = None  # kept alive by `send` (keep=True)

    @property
    def base(self):
        return f"https://{self.host}:{self.port}"

    def token(self, uri=None, key_name=None, key=None, expiry=None):
        """A token of this rule (or of `key_name`/`key`) for the hub's URL (or `uri`)."""
        return sas(uri or f"{self.base}/{self.hub}", key_name or self.key_name, key or self.key, expiry)

    def path(self, path, api_version="2015-01"):
        """`/{hub}{path}` with `api-version` added (NH's clients always send one)."""
        sep = "&" if "?" in path else "?"
        return f"/{self.hub}{path}{sep}api-version={api_version}" if api_version else f"/{self.hub}{path}"

    def request(self, method, path, body=None, headers=None, auth="sign", keep=False, chunked=False, hub_path=True):
        """One request; never raises for network errors (status 0 instead). `path` is below the
        hub (`/messages`) unless `hub_path` is False. `keep` reuses one kept-alive connection."""
        # A value outside Latin-1 goes as its UTF-8 bytes (http.client would refuse it).
        headers = {name: value.encode() if isinstance(value, str) and not value.isascii() and max(map(ord, value)) > 255 else value
                   for name, value in (headers or {}).items()}
        if auth == "sign":
            headers["Authorization"] = self.token()
        elif auth is not None:
            headers["Authorization"] = auth
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        target = self.path(path) if hub_path else path
        started = time.monotonic()
        for attempt in (1, 2):
            connection = self.connection if keep and self.connection else http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self.context)
            reused = connection is self.connection
            try:
                if chunked:
                    size = 16384
                    pieces = [body[i:i + size] for i in range(0, len(body), size)]
                    connection.request(method, target, body=iter(pieces), headers=headers, encode_chunked=True)
                else:
                    connection.request(method, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                answer = Answer(response.status, dict(response.getheaders()), data, time.monotonic() - started)
                if keep and not response.will_close:
                    self.connection = connection
                else:
                    connection.close()
                    if connection is self.connection:
                        self.connection = None
                return answer
            except (OSError, http.client.HTTPException) as error:
                connection.close()
                if connection is self.connection:
                    self.connection = None
                if reused and attempt == 1:  # the server closed a kept-alive connection: once more, on a new one
                    continue
                return Answer(0, elapsed=time.monotonic() - started, error=f"{type(error).__name__}: {error}")
        raise AssertionError("unreachable")

    def close(self):
        if self.connection:
            self.connection.close()
            self.connection = None


def nh_error_problem(answer):
    """Why a refusal is not NH's (`application/xml`, `<Error><Code>status</Code><Detail>…`), or None."""
    if not (answer.header("Content-Type") or "").startswith("application/xml"):
        return f"Content-Type {answer.header('Content-Type')!r}, not application/xml"
    if not answer.text.startswith(f"<Error><Code>{answer.status}</Code><Detail>") or not answer.text.endswith("</Detail></Error>"):
        return f"the body is not <Error><Code>{answer.status}</Code><Detail>…</Detail></Error>: {answer.text[:160]!r}"
    return None


# -- registrations (Atom XML) --------------------------------------------------------------------

ATOM = '<entry xmlns="http://www.w3.org/2005/Atom">{updated}<content type="application/xml">{description}</content></entry>'
CONNECT = 'xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"'


def apple(tags="sports", token="c1" * 32, extra=""):
    """An AppleRegistrationDescription (as the JS SDK writes it) holding `extra` last."""
    return f"<AppleRegistrationDescription {CONNECT}><Tags>{tags}</Tags><DeviceToken>{token}</DeviceToken>{extra}</AppleRegistrationDescription>"


def entry(description, updated=""):
    return ATOM.format(updated=updated, description=description)


def xxe_file(path="/etc/passwd", declaration=True):
    """A general external entity naming a local file, used where the description goes."""
    return (('<?xml version="1.0"?>' if declaration else "") + f'<!DOCTYPE e [<!ENTITY x SYSTEM "file://{path}">]>'
            + entry("&x;"))


def xxe_parameter(path="/etc/passwd"):
    """A parameter entity naming a local file, expanded inside the DTD."""
    return f'<?xml version="1.0"?><!DOCTYPE e [<!ENTITY % p SYSTEM "file://{path}"> %p;]>' + entry(apple())


def xxe_external_dtd(url):
    """An external DTD subset (fetched by a reader that loads DTDs)."""
    return f'<?xml version="1.0"?><!DOCTYPE entry SYSTEM "{url}">' + entry(apple())


def xxe_in_tags(url):
    """An external entity defined for, and used in, the registration's tags."""
    return f'<!DOCTYPE e [<!ENTITY t SYSTEM "{url}">]>' + entry(apple(tags="&t;"))


def billion_laughs(levels=10, fan=10):
    """The classic: entity N is `fan` references to entity N-1; the last expands to fan**levels lols."""
    names = [f"lol{n}" for n in range(levels)]
    decl = f'<!ENTITY {names[0]} "lol">' + "".join(
        f'<!ENTITY {names[n]} "{("&" + names[n - 1] + ";") * fan}">' for n in range(1, levels))
    return f'<?xml version="1.0"?><!DOCTYPE lolz [{decl}]>' + entry(apple(tags=f"&{names[-1]};"))


def laughs_short():
    """Three levels, as the NH stage has always sent it."""
    return ('<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>'
            + entry("&c;"))


def nested(depth, name="a"):
    """An entry whose description holds `depth` levels of `<name>` (closed)."""
    return entry(apple(extra=f"<{name}>" * depth + f"</{name}>" * depth))


def many_elements(count):
    """An entry whose description holds `count` empty siblings."""
    return entry(apple(extra="<x/>" * count))


def many_attributes(count):
    attributes = " ".join(f'a{n}="v"' for n in range(count))
    return entry(f"<AppleRegistrationDescription {CONNECT} {attributes}><Tags>a</Tags><DeviceToken>{'c1' * 32}</DeviceToken>"
                 "</AppleRegistrationDescription>")


# -- installations and JSON Patch ----------------------------------------------------------------


def installation(tags=("sports",), token="d1" * 32, **more):
    return {"platform": "apns", "pushChannel": token, "tags": list(tags), **more}


def deep_json(depth, kind="array"):
    """`depth` levels of arrays (`[[[…]]]`) or objects (`{"a":{"a":…}}`) around a 1."""
    if kind == "array":
        return "[" * depth + "1" + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth
