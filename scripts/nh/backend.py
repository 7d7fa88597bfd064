#!/usr/bin/env python3
"""The tutorial's ASP.NET `AppBackend`, in Python (stdlib only), with RichPush as its notification
hub (scripts/demo.sh --nh).

It serves the seed protocol (/work/shared/SEED-PROTOCOL.md, the "Notify users" and "rich push"
tutorials' controllers) to the devices: Basic auth where the user name must equal the password (the
tutorial's check, explicitly not real authentication; anything else is 401 with WWW-Authenticate),
`POST /api/register?handle=H`, `PUT /api/register/{id}`, `DELETE /api/register/{id}`,
`POST /api/notifications`, `GET /api/notifications/{id}` (the payload's bytes and content type),
and `POST /api/notifications/{id}/receipts` (the device simulator's receipts: recorded in the log,
200). Rich notifications live in memory, as in the tutorial's `Notifications` class: ids count from
0, the payload is the image given with --image unless the POST carries an image of its own.

It reaches the hub only through Azure Notification Hubs' REST interface, with a connection string
(--connection-string, or $NH_CONNECTION_STRING to keep its key off the command line; SAS tokens
signed with the rule's key) over HTTPS verified against --ca-file:

- RegisterController: `GET {hub}/registrations?$filter=DeviceToken eq '…'` (ChannelUri for a
  handle that is not an APNs token) to find the handle's registrations (one kept, the others
  deleted), `POST {hub}/registrationIDs` for a new id, `PUT {hub}/registrations/{id}` with an Atom
  entry holding an `AppleRegistrationDescription` (or Gcm…, FcmV1…) whose tags include
  `username:<user>`, `DELETE {hub}/registrations/{id}`;
- NotificationsController.Post: `POST {hub}/messages` with `ServiceBusNotification-Format: apple`
  and `ServiceBusNotification-Tags: username:<user>`, the tutorial's silent push as the body
  (`{"aps": {"content-available": 1, "sound": ""}, "richId": "0", ...}`; with --no-sound-key
  without its `"sound": ""`: a background push carries nothing to show, and RichPush's NH listener
  answers the tutorial's exact payload 400, naming the key).

As in the tutorial, any authenticated user may update or delete any registration id and fetch any
notification: it is a sample, not an authorization model.

`backend.py outcome ID` reads NH's outcome of a send (`GET {hub}/messages/{id}`) with the same
connection string, waiting until it is Completed (scripts/demo.sh checks it).

One JSON line per event goes to stdout; the line "backend: listening on …" to stderr when ready.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.etree import ElementTree
from xml.sax.saxutils import escape

ATOM = "{http://www.w3.org/2005/Atom}"
CONNECT = "{http://schemas.microsoft.com/netservices/2010/10/servicebus/connect}"
API_VERSION = "2015-01"
# NH's entity ids (registration ids included): letters, digits, '.', '-', '_'.
REGISTRATION_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
APNS_TOKEN = re.compile(r"^[0-9A-Fa-f]{64}$")
# The registration description per platform of the tutorial's RegisterController, and the element
# holding the device's handle. wns and mpns are the tutorial's too; RichPush's hub does not serve them.
DESCRIPTIONS = {
    "apns": ("AppleRegistrationDescription", "DeviceToken"),
    "gcm": ("GcmRegistrationDescription", "GcmRegistrationId"),
    "fcm": ("FcmV1RegistrationDescription", "FcmV1RegistrationId"),
    "fcmv1": ("FcmV1RegistrationDescription", "FcmV1RegistrationId"),
}
NOT_SERVED = {"wns", "mpns"}
# NH's tags: 1 to 120 of these characters.
TAG = re.compile(r"^[A-Za-z0-9_@#.:-]{1,120}$")


def log(event, **fields):
    """One JSON line per event, written at once."""
    sys.stdout.write(json.dumps({"event": event, **fields}, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class HubError(Exception):
    """The hub answered something else than the call expects (or could not be reached)."""

    def __init__(self, status, detail):
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


class NotificationHub:
    """The few NH REST calls the tutorial's backend makes, as NotificationHubClient makes them."""

    def __init__(self, connection_string, hub, ca_file):
        fields = dict(part.split("=", 1) for part in connection_string.split(";") if "=" in part)
        endpoint = urllib.parse.urlparse(fields["Endpoint"])
        if endpoint.scheme != "sb" or not endpoint.hostname:
            raise ValueError("the connection string's Endpoint must be sb://host[:port]/")
        self.host = endpoint.hostname
        self.port = endpoint.port or 443
        self.hub = fields.get("EntityPath") or hub
        if not self.hub:
            raise ValueError("name the hub (--hub) or give a connection string with EntityPath")
        self.key_name = fields["SharedAccessKeyName"]
        self.key = fields["SharedAccessKey"]
        # Verified against the certificate of the run (its CA file), host name included.
        self.tls = ssl.create_default_context(cafile=ca_file)
        netloc = self.host if self.port == 443 else f"{self.host}:{self.port}"
        self.audience = f"https://{netloc}/{self.hub}"

    def token(self, lifetime=3600):
        """A SharedAccessSignature for the hub's URL, as NH's SDKs sign it: HMAC-SHA256 of the
        escaped audience (lower case), a newline and the expiry, keyed with the key's text."""
        expiry = str(int(time.time()) + lifetime)
        audience = urllib.parse.quote(self.audience, safe="").lower()
        digest = hmac.new(self.key.encode(), f"{audience}\n{expiry}".encode(), hashlib.sha256).digest()
        signature = urllib.parse.quote(base64.b64encode(digest).decode(), safe="")
        return f"SharedAccessSignature sr={audience}&sig={signature}&se={expiry}&skn={self.key_name}"

    def call(self, method, path, body=None, headers=None, query=""):
        """One request to {hub}/{path}: (status, headers, body text)."""
        url = f"/{self.hub}/{path}?api-version={API_VERSION}" + (f"&{query}" if query else "")
        sent = {"Authorization": self.token(), "x-ms-version": API_VERSION, **(headers or {})}
        data = body.encode() if isinstance(body, str) else body
        connection = http.client.HTTPSConnection(self.host, self.port, context=self.tls, timeout=30)
        try:
            connection.request(method, url, body=data, headers=sent)
            response = connection.getresponse()
            return response.status, response.headers, response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as error:
            raise HubError(502, f"cannot reach the hub: {error}") from error
        finally:
            connection.close()

    @staticmethod
    def error_detail(text):
        try:
            root = ElementTree.fromstring(text)
            return (root.findtext("Detail") or root.findtext("Code") or text)[:300]
        except ElementTree.ParseError:
            return text[:300]

    def registrations_of(self, handle):
        """The ids of the registrations with this push handle (GetRegistrationsByChannelAsync)."""
        field = "DeviceToken" if APNS_TOKEN.match(handle) else "ChannelUri"
        literal = handle.replace("'", "''")
        query = "$filter=" + urllib.parse.quote(f"{field} eq '{literal}'", safe="") + "&$top=100"
        status, _, text = self.call("GET", "registrations", query=query)
        if status != 200:
            raise HubError(status, self.error_detail(text))
        ids = []
        for entry in ElementTree.fromstring(text).iter(ATOM + "entry"):
            content = entry.find(ATOM + "content")
            for description in content if content is not None else []:
                registration = description.findtext(CONNECT + "RegistrationId")
                if registration:
                    ids.append(registration)
        return ids

    def create_registration_id(self):
        """POST registrationIDs: the new id is in the Location header, .../registrationids/{id}?..."""
        status, headers, text = self.call("POST", "registrationIDs", body=b"")
        if status != 201:
            raise HubError(status, self.error_detail(text))
        path = urllib.parse.urlparse(headers.get("Location", "")).path.rstrip("/").split("/")
        if len(path) < 2 or path[-2].lower() != "registrationids":
            raise HubError(502, f"no registration id in the hub's answer (Location: {headers.get('Location')})")
        return urllib.parse.unquote(path[-1])

    def create_or_update(self, registration, platform, handle, tags):
        """PUT registrations/{id} (CreateOrUpdateRegistrationAsync)."""
        element, handle_element = DESCRIPTIONS[platform]
        description = (f'<{element} xmlns:i="http://www.w3.org/2001/XMLSchema-instance" '
                       'xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect">'
                       f"<Tags>{escape(','.join(tags))}</Tags><{handle_element}>{escape(handle)}</{handle_element}></{element}>")
        entry = ('<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom">'
                 f'<content type="application/xml">{description}</content></entry>')
        status, _, text = self.call("PUT", f"registrations/{urllib.parse.quote(registration, safe='')}", body=entry,
                                    headers={"Content-Type": "application/atom+xml;type=entry;charset=utf-8"})
        if status != 200:
            raise HubError(status, self.error_detail(text))

    def delete_registration(self, registration):
        """DELETE registrations/{id}; a registration already gone is no error. False if it was gone."""
        status, _, text = self.call("DELETE", f"registrations/{urllib.parse.quote(registration, safe='')}",
                                    headers={"If-Match": "*"})
        if status == 404:
            return False
        if status != 200:
            raise HubError(status, self.error_detail(text))
        return True

    def send_apple(self, payload, tags):
        """POST messages (SendAppleNativeNotificationAsync): the send's id, from its Location."""
        status, headers, text = self.call("POST", "messages", body=payload, headers={
            "Content-Type": "application/json;charset=utf-8",
            "ServiceBusNotification-Format": "apple",
            "ServiceBusNotification-Tags": tags,
        })
        if status != 201:
            raise HubError(status, self.error_detail(text))
        path = urllib.parse.urlparse(headers.get("Location", "")).path.rstrip("/").split("/")
        return path[-1] if len(path) >= 2 and path[-2] == "messages" else None

    def outcome(self, notification):
        """GET messages/{id}: NH's NotificationDetails, as (state, {platform: {outcome: count}})."""
        status, _, text = self.call("GET", f"messages/{urllib.parse.quote(notification, safe='')}")
        if status != 200:
            raise HubError(status, self.error_detail(text))
        root = ElementTree.fromstring(text)
        counts = {}
        for child in root:
            name = child.tag.replace(CONNECT, "")
            if name.endswith("OutcomeCounts"):
                counts[name] = {o.findtext(CONNECT + "Name"): int(o.findtext(CONNECT + "Count") or 0) for o in child}
        return root.findtext(CONNECT + "State"), counts


class Notifications:
    """The tutorial's `Notifications`: rich notifications in memory, ids counting from 0."""

    def __init__(self, image, content_type):
        self.image = image
        self.content_type = content_type
        self.items = []
        self.lock = threading.Lock()

    def create(self, message, rich_type, payload, content_type):
        with self.lock:
            notification = {"Id": len(self.items), "Message": message, "RichType": rich_type, "Payload": payload,
                            "ContentType": content_type, "Read": False}
            self.items.append(notification)
            return notification

    def get(self, notification):
        with self.lock:
            return self.items[notification] if 0 <= notification < len(self.items) else None


class Backend(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "AppBackend"
    hub: NotificationHub
    notifications: Notifications
    max_body = 16 << 20
    no_sound_key = False

    def log_message(self, format, *args):
        pass  # one JSON line per event instead (log())

    # MARK: plumbing

    def answer(self, status, body=b"", content_type="application/json; charset=utf-8", headers=None):
        if isinstance(body, (dict, list, str)) and content_type.startswith("application/json"):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.max_body:
            raise ValueError("the body is too large")
        return self.rfile.read(length) if length > 0 else b""

    def user(self):
        """The authenticated user: Basic credentials whose user name equals the password (the
        tutorial's check), else None."""
        scheme, _, credentials = (self.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            name, _, password = base64.b64decode(credentials.strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return name if name and name == password else None

    def route(self, method):
        path, _, query = self.path.partition("?")
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        user = self.user()
        if user is None:
            self.body()
            return self.answer(401, {"error": "Basic credentials whose user name is the password"},
                               headers={"WWW-Authenticate": 'Basic realm="AppBackend"'})
        try:
            if parts[:2] == ["api", "register"]:
                if method == "POST" and len(parts) == 2:
                    return self.register(user, urllib.parse.parse_qs(query).get("handle", [None])[0])
                if method == "PUT" and len(parts) == 3:
                    return self.update_registration(user, parts[2])
                if method == "DELETE" and len(parts) == 3:
                    return self.delete_registration(user, parts[2])
            if parts[:2] == ["api", "notifications"]:
                if method == "POST" and len(parts) == 2:
                    return self.send(user)
                if method == "GET" and len(parts) == 3:
                    return self.fetch(user, parts[2])
                if method == "POST" and len(parts) == 4 and parts[3] == "receipts":
                    return self.receipt(user, parts[2])
            self.body()
            return self.answer(404, {"error": "no such route"})
        except HubError as error:
            # The tutorial lets a hub failure through as a 500; a gateway error says whose it is.
            log("hub-error", user=user, status=error.status, detail=error.detail)
            return self.answer(502, {"error": f"the notification hub answered {error.status}: {error.detail}"})
        except ValueError as error:
            return self.answer(400, {"error": str(error)})

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.route("POST")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    # MARK: RegisterController

    def register(self, user, handle):
        """POST /api/register?handle=H: keeps one registration of H (the others deleted), or a new id."""
        self.body()
        kept = None
        deleted = []
        if handle:
            for registration in self.hub.registrations_of(handle):
                if kept is None:
                    kept = registration
                else:
                    self.hub.delete_registration(registration)
                    deleted.append(registration)
        registration = kept or self.hub.create_registration_id()
        log("registration-id", user=user, registration=registration, reused=kept is not None, deleted=deleted)
        self.answer(200, registration)

    def update_registration(self, user, registration):
        """PUT /api/register/{id}: the registration for the device's platform and handle, its tags
        plus username:<user>."""
        if not REGISTRATION_ID.match(registration):
            raise ValueError("a registration id is 1 to 64 letters, digits, '.', '-' or '_'")
        try:
            update = json.loads(self.body() or b"null")
        except ValueError:
            raise ValueError("the body must be JSON: {\"Platform\", \"Handle\", \"Tags\"}") from None
        if not isinstance(update, dict):
            raise ValueError("the body must be a JSON object: {\"Platform\", \"Handle\", \"Tags\"}")
        platform = str(update.get("Platform") or "").lower()
        handle = update.get("Handle")
        tags = update.get("Tags") or []
        if platform in NOT_SERVED:
            return self.answer(400, {"error": f"platform {platform}: this hub (RichPush) does not serve it"})
        if platform not in DESCRIPTIONS:
            return self.answer(400, {"error": f"unknown platform '{update.get('Platform')}'"})
        if not isinstance(handle, str) or not handle:
            raise ValueError("Handle must be the device's push handle")
        if not isinstance(tags, list) or not all(isinstance(t, str) and TAG.match(t) for t in tags):
            raise ValueError("Tags must be a list of tags (letters, digits, _ @ # . : -)")
        tags = list(dict.fromkeys(tags + [f"username:{user}"]))
        try:
            self.hub.create_or_update(registration, platform, handle, tags)
        except HubError as error:
            if error.status in (404, 410):
                # ReturnGoneIfHubResponseIsGone: the registration is gone upstream.
                return self.answer(410, {"error": "the registration is gone; register again"})
            if error.status == 400:
                return self.answer(400, {"error": error.detail})
            raise
        log("registered", user=user, registration=registration, platform=platform, tags=tags)
        self.answer(200, b"", content_type="application/json")

    def delete_registration(self, user, registration):
        """DELETE /api/register/{id}: 200 (also for a registration already gone)."""
        self.body()
        if not REGISTRATION_ID.match(registration):
            raise ValueError("a registration id is 1 to 64 letters, digits, '.', '-' or '_'")
        existed = self.hub.delete_registration(registration)
        log("unregistered", user=user, registration=registration, existed=existed)
        self.answer(200, b"", content_type="application/json")

    # MARK: NotificationsController

    def send(self, user):
        """POST /api/notifications: a rich notification (the backend's image, or the image the
        request carries), and the tutorial's silent push to username:<user> through the hub."""
        body = self.body()
        query = urllib.parse.parse_qs(self.path.partition("?")[2])
        message = query.get("message", ["Check this image out!"])[0]
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if body and content_type.startswith("image/"):
            payload, payload_type = body, content_type
        elif body:
            raise ValueError("the body is the image (Content-Type image/...) or nothing (the backend's image)")
        else:
            payload, payload_type = self.notifications.image, self.notifications.content_type
        notification = self.notifications.create(message, "img", payload, payload_type)
        # The tutorial's payload, built as its controller builds it (its Id and its Message).
        aps = {"content-available": 1} if self.no_sound_key else {"content-available": 1, "sound": ""}
        silent = json.dumps({"aps": aps, "richId": str(notification["Id"]),
                             "richMessage": notification["Message"], "richType": notification["RichType"]})
        tag = f"username:{user}"
        sent = self.hub.send_apple(silent, tag)
        log("sent", user=user, richId=str(notification["Id"]), tags=tag, payload=silent, hubNotification=sent)
        self.answer(200, {"id": str(notification["Id"]), "hubNotification": sent})

    def fetch(self, user, notification):
        """GET /api/notifications/{id}: the payload's bytes, with its content type."""
        self.body()
        if not re.fullmatch(r"[0-9]{1,9}", notification):
            raise ValueError("a notification id is a decimal integer")
        found = self.notifications.get(int(notification))
        if found is None:
            return self.answer(404, {"error": f"no notification {notification}"})
        log("fetched", user=user, richId=notification, bytes=len(found["Payload"]), contentType=found["ContentType"])
        self.answer(200, found["Payload"], content_type=found["ContentType"])

    def receipt(self, user, notification):
        """POST /api/notifications/{id}/receipts (the device simulator's): recorded, 200."""
        try:
            receipt = json.loads(self.body() or b"{}")
        except ValueError:
            raise ValueError("a receipt is JSON") from None
        kind = receipt.get("kind") if isinstance(receipt, dict) else None
        if kind == "opened" and re.fullmatch(r"[0-9]{1,9}", notification):
            found = self.notifications.get(int(notification))
            if found is not None:
                found["Read"] = True
        log("receipt", user=user, richId=notification, kind=kind,
            installation=receipt.get("installation") if isinstance(receipt, dict) else None)
        self.answer(200, {})


def serve(arguments, hub):
    with open(arguments.image, "rb") as file:
        image = file.read()
    handler = type("Handler", (Backend,), {"hub": hub, "notifications": Notifications(image, arguments.image_type),
                                           "no_sound_key": arguments.no_sound_key})
    server = ThreadingHTTPServer((arguments.host, arguments.port), handler)
    server.daemon_threads = True
    print(f"backend: listening on http://{arguments.host}:{server.server_address[1]} (hub {hub.audience})",
          file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def outcome(arguments, hub):
    """Waits (up to --wait seconds) until the send is Completed; prints its outcome as JSON."""
    deadline = time.monotonic() + arguments.wait
    while True:
        try:
            state, counts = hub.outcome(arguments.id)
        except HubError as error:
            print(f"the hub answered {error.status}: {error.detail}", file=sys.stderr)
            return 1
        if state == "Completed" or time.monotonic() > deadline:
            print(json.dumps({"state": state, **counts}))
            return 0 if state == "Completed" else 1
        time.sleep(0.2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connection-string", default=os.environ.get("NH_CONNECTION_STRING"),
                        help="the hub's connection string (richpush apps connection-string; default $NH_CONNECTION_STRING)")
    parser.add_argument("--hub", help="the hub's name (the app), unless the connection string has EntityPath")
    parser.add_argument("--ca-file", required=True, help="the certificate (or CA) the hub's TLS certificate must verify against")
    commands = parser.add_subparsers(dest="command")
    commands.required = True
    run = commands.add_parser("serve", help="serve the devices")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8080)
    run.add_argument("--image", required=True, help="the image of the tutorial's rich notifications (its embedded logo.png)")
    run.add_argument("--image-type", default="image/png")
    run.add_argument("--no-sound-key", action="store_true",
                     help='send the silent push without the tutorial\'s "sound": "" (a background push carries nothing to show: '
                          "RichPush's NH listener answers the exact payload 400)")
    check = commands.add_parser("outcome", help="NH's outcome of a send, once Completed")
    check.add_argument("id")
    check.add_argument("--wait", type=float, default=30)
    arguments = parser.parse_args()
    if not arguments.connection_string:
        parser.error("give --connection-string or set NH_CONNECTION_STRING")
    hub = NotificationHub(arguments.connection_string, arguments.hub, arguments.ca_file)
    if arguments.command == "serve":
        serve(arguments, hub)
        return 0
    return outcome(arguments, hub)


if __name__ == "__main__":
    sys.exit(main())
