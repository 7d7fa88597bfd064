#!/usr/bin/env python3
"""NH's fcmv1, browser and template sends delivered (scripts/test-nh-clients.sh, after
scripts/nh/delivery.py): hub `news` has FCM credentials for fcm-sim and a VAPID key for
webpush-sim, and one worker sends through apns-sim, fcm-sim and webpush-sim.

azure-notification-hub-unofficial registers, in hub `news`, with tag `multi`: two fcmv1 phones
(one with a template), a gcm phone with a template (FCM v1 reaches gcm installations in RichPush,
docs/nh.md), two browsers (one with a template) and an iPhone with a template. This script plays
the devices:
- an Android phone is its registration token's channel on the simulated hub (fcm-sim passes every
  message it accepts on to `<prefix>:{hub<b>}:device:<token>` in Redis, b the CRC16 of the token
  mod 128); SSUBSCRIBEd, the phone is online and receives the v1 message as Google got it. fcm-sim
  logs each messages:send (token and status; it has no option to log the message itself);
- a browser subscribes at webpush-sim with a P-256 key and an auth secret of its own, restricted
  to the hub's VAPID key, registers that subscription as its pushChannel, listens on the
  subscription's WebSocket and decrypts what arrives (RFC 8291 aes128gcm);
- the iPhone is read from apns-sim's request log with payloads.

NH's rules checked: an fcmv1 send (`{"message": {...}}`, or the message alone) reaches the Android
phones as written, each with its own token, and nothing else; a browser send reaches both browsers
byte for byte, and nothing else; a template send reaches only the devices with a template, each
rendered in its platform's form, a property the send lacks as an empty string; the outcome
documents (GET messages/{id}) count every device under its platform. Exits 1 on any mismatch."""

import argparse
import base64
import json
import os
import socket
import ssl
import threading
import urllib.request
from xml.etree import ElementTree

import websocket
from azure_notification_hub.client import NotificationHubsClient
from azure_notification_hub.notifications import (create_browser_notification, create_fcm_v1_body, create_fcm_v1_notification,
                                                  create_template_notification)
from checks import check, finish, json_lines
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from delivery import NAMESPACE, requests as apns_requests, wait

IPHONE = "b3" * 32
FCM_TEMPLATE, FCM_PLAIN, GCM_TEMPLATE = "nh-fcmv1-template", "nh-fcmv1-plain", "nh-gcm-template"
# Each template uses `title` and `minute`; the template send gives `title` alone.
# NH's FCM v1 template is FCM v1's request body, {"message": {...}} (Microsoft's FCM v1 migration guide).
FCM_V1_TEMPLATE = '{"message":{"data":{"title":"$(title)","minute":"$(minute)"},"android":{"priority":"HIGH"}}}'
# A gcm registration's template, FCM's legacy payload: its {"data": {...}} is also an FCM v1 message.
GCM_LEGACY_TEMPLATE = '{"data":{"title":"$(title)","minute":"$(minute)"}}'
BROWSER_TEMPLATE = '{"title":"$(title)","minute":"$(minute)"}'
APNS_TEMPLATE = '{"aps":{"alert":{"title":"$(title)","body":"$(minute)"}}}'


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hkdf(salt, ikm, info, length):
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=salt, info=info).derive(ikm)


class Browser:
    """A browser's push subscription at webpush-sim: its own P-256 key and auth secret (as
    PushManager.subscribe() makes them), restricted to the application server's VAPID key, and what
    its WebSocket received, each body decrypted with its keys (RFC 8291)."""

    def __init__(self, service, ca, server_key):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.public = self.key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
        self.auth = os.urandom(16)
        request = urllib.request.Request(service + "/subscribe", data=json.dumps({"applicationServerKey": server_key}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=ca), timeout=30) as answer:
            subscription = json.load(answer)
        self.endpoint = subscription["endpoint"]
        self.id = subscription["subscriptionId"]
        self.socket = websocket.create_connection(subscription["webSocket"], sslopt={"ca_certs": ca}, timeout=None)
        hello = json.loads(self.socket.recv())
        check(hello.get("type") == "hello", f"browser {self.id[:8]}… subscribed and connected ({hello})")
        self.received = []  # (plaintext or an error, the message's metadata)
        threading.Thread(target=self._listen, daemon=True).start()

    def channel(self):
        """NH's pushChannel of a browser installation."""
        return {"endpoint": self.endpoint, "p256dh": b64url(self.public), "auth": b64url(self.auth)}

    def _listen(self):
        while True:
            try:
                frame = json.loads(self.socket.recv())
            except Exception:
                return
            if frame.get("type") == "message":
                message = frame["message"]
                try:
                    plain = self.decrypt(base64.b64decode(message["body"]))
                except Exception as error:
                    plain = f"not decrypted: {error!r}"
                self.received.append((plain, message))

    def decrypt(self, body):
        """RFC 8291: the aes128gcm header (salt, rs, the sender's ephemeral key), ECDH with our
        key, the IKM keyed by our auth secret, the content key and nonce, one record ending in 0x02."""
        salt, length = body[:16], body[20]
        sender, ciphertext = body[21:21 + length], body[21 + length:]
        secret = self.key.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), sender))
        ikm = hkdf(self.auth, secret, b"WebPush: info\x00" + self.public + sender, 32)
        key = hkdf(salt, ikm, b"Content-Encoding: aes128gcm\x00", 16)
        nonce = hkdf(salt, ikm, b"Content-Encoding: nonce\x00", 12)
        plain = AESGCM(key).decrypt(nonce, ciphertext, None).rstrip(b"\x00")
        if not plain.endswith(b"\x02"):
            raise ValueError("the record does not end with the last record's delimiter 0x02")
        return plain[:-1]


def crc16(data):
    """Redis Cluster's CRC16 (XMODEM), which the simulated hub buckets devices by."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


class AndroidPhones:
    """Android phones online at the simulated hub fcm-sim passes accepted messages on to: each
    SSUBSCRIBEs its token's channel (the default app's address is the token itself) and keeps the
    v1 message of each envelope that arrives."""

    def __init__(self, port, prefix, tokens):
        self.connection = socket.create_connection(("127.0.0.1", int(port)))
        self.file = self.connection.makefile("rb")
        self.channels = {f"{prefix}:{{hub{crc16(token.encode()) % 128}}}:device:{token}": token for token in tokens}
        self.received = {token: [] for token in tokens}
        for channel in self.channels:
            self.connection.sendall(self.command("SSUBSCRIBE", channel))
            reply = self.reply()
            check(reply[:2] == [b"ssubscribe", channel.encode()], f"Android phone listening on {channel} ({reply})")
        threading.Thread(target=self._listen, daemon=True).start()

    @staticmethod
    def command(*words):
        encoded = [word.encode() for word in words]
        return b"".join([f"*{len(encoded)}\r\n".encode()] + [b"$%d\r\n%s\r\n" % (len(word), word) for word in encoded])

    def reply(self):
        """One RESP2 reply: arrays, bulk strings, integers, simple strings and errors."""
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        if kind == b"$":
            return None if int(rest) < 0 else self.file.read(int(rest) + 2)[:-2]
        if kind == b":":
            return int(rest)
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if not line:
            raise EOFError("Redis closed the connection")
        return rest

    def _listen(self):
        while True:
            try:
                reply = self.reply()
            except Exception:
                return
            if isinstance(reply, list) and len(reply) == 3 and reply[0] == b"smessage":
                envelope = json.loads(reply[2])
                self.received[self.channels[reply[1].decode()]].append(envelope.get("payload"))


def log(path, event=None):
    """A simulator's JSON lines (webpush-sim's of one event)."""
    return json_lines(path, lambda entry: event is None or entry.get("event") == event)


def fcm_sends(path):
    """fcm-sim's messages:send lines (the others are the token endpoint's)."""
    return [entry for entry in log(path) if "issued" not in entry]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", required=True)
    parser.add_argument("--apns-log", required=True)
    parser.add_argument("--fcm-log", required=True)
    parser.add_argument("--webpush-log", required=True)
    parser.add_argument("--webpush-url", required=True)
    parser.add_argument("--webpush-ca", required=True)
    parser.add_argument("--vapid-public-key", required=True)
    parser.add_argument("--redis-port", required=True)
    parser.add_argument("--hub-prefix", default="richpush")
    arguments = parser.parse_args()
    node = NotificationHubsClient(arguments.full, "news")
    # Each answer's Location names the send (NH's `messages/{id}`), for its outcome document.
    answers = []
    node._client.event_hooks["response"].append(lambda response: answers.append(response))

    def send(notification, tags):
        node.send_notification(notification, tag_expression=tags)
        location = answers[-1].headers.get("Location", "")
        check(answers[-1].status_code == 201 and "/news/messages/" in location, f"send answered {answers[-1].status_code}, {location}")
        return location.split("/messages/")[-1].split("?")[0]

    def outcome(notification):
        """Each platform's counts in the send's outcome document, once it says Completed."""
        root = ElementTree.fromstring(node.get_notification_outcome_details(notification)["_raw_xml"])
        if root.findtext(NAMESPACE + "State") != "Completed":
            return None
        counts = {}
        for element in root:
            if element.tag.endswith("OutcomeCounts"):
                counts[element.tag.replace(NAMESPACE, "")] = {o.findtext(NAMESPACE + "Name"): int(o.findtext(NAMESPACE + "Count"))
                                                              for o in element}
        return ("Completed", counts)

    def settled(notification, what, arrived):
        """Waits for the send's outcome document to say Completed (every platform answered), then
        for what the platforms accepted to reach the devices; the document's counts."""
        counts = (wait(f"{what}: Completed", lambda: outcome(notification)) or (None, None))[1]
        wait(f"{what}: at the devices", arrived, seconds=20)
        return counts

    # The devices, then their installations (tag multi), as NH's clients put them.
    browser_template = Browser(arguments.webpush_url, arguments.webpush_ca, arguments.vapid_public_key)
    browser_plain = Browser(arguments.webpush_url, arguments.webpush_ca, arguments.vapid_public_key)
    browsers = [browser_template, browser_plain]
    phones = AndroidPhones(arguments.redis_port, arguments.hub_prefix, [FCM_TEMPLATE, FCM_PLAIN, GCM_TEMPLATE])
    installations = [
        {"installationId": "news-android-1", "platform": "fcmv1", "pushChannel": FCM_TEMPLATE, "tags": ["multi"],
         "templates": {"goal": {"body": FCM_V1_TEMPLATE}}},
        {"installationId": "news-android-2", "platform": "fcmv1", "pushChannel": FCM_PLAIN, "tags": ["multi"]},
        {"installationId": "news-android-3", "platform": "gcm", "pushChannel": GCM_TEMPLATE, "tags": ["multi"],
         "templates": {"goal": {"body": GCM_LEGACY_TEMPLATE}}},
        {"installationId": "news-browser-1", "platform": "browser", "pushChannel": browser_template.channel(), "tags": ["multi"],
         "templates": {"goal": {"body": BROWSER_TEMPLATE}}},
        {"installationId": "news-browser-2", "platform": "browser", "pushChannel": browser_plain.channel(), "tags": ["multi"]},
        {"installationId": "news-iphone-3", "platform": "apns", "pushChannel": IPHONE, "tags": ["multi"],
         "templates": {"goal": {"body": APNS_TEMPLATE}}},
    ]
    for installation in installations:
        node.create_or_update_installation(installation)
    apns_before = len(apns_requests(arguments.apns_log))

    def nothing_more(what, fcm=None, pushes=None, apns=None):
        """After a send completed: no simulator got more than its share."""
        if fcm is not None:
            check(len(fcm_sends(arguments.fcm_log)) == fcm and sum(map(len, phones.received.values())) == fcm,
                  f"{what}: fcm-sim got no other message ({len(fcm_sends(arguments.fcm_log))} in all)")
        if pushes is not None:
            check(len(log(arguments.webpush_log, "push")) == pushes and sum(len(b.received) for b in browsers) == pushes,
                  f"{what}: webpush-sim got no other push ({len(log(arguments.webpush_log, 'push'))} in all)")
        if apns is not None:
            check(len(apns_requests(arguments.apns_log)) == apns_before + apns,
                  f"{what}: apns-sim got no other request ({len(apns_requests(arguments.apns_log)) - apns_before} since)")

    # 1. An fcmv1 native send, FCM v1's request body as written: the Android phones (fcmv1 and
    # gcm), each with its own token; no browser, no iPhone.
    message = {"notification": {"title": "Kick-off", "body": "as written"}, "data": {"richId": "7", "kind": "native"},
               "android": {"priority": "HIGH", "ttl": "60s"}}
    native = send(create_fcm_v1_notification(json.dumps({"message": message})), "multi")
    counts = settled(native, "fcmv1 send", lambda: sum(map(len, phones.received.values())) >= 3)
    for token in [FCM_TEMPLATE, FCM_PLAIN, GCM_TEMPLATE]:
        check(phones.received[token] == [{**message, "token": token}],
              f"{token} got the fcmv1 message as written, with its token ({phones.received[token]})")
    sends = fcm_sends(arguments.fcm_log)
    check(sorted((e.get("token"), e.get("status")) for e in sends) == sorted((t, 200) for t in [FCM_TEMPLATE, FCM_PLAIN, GCM_TEMPLATE]),
          f"fcm-sim accepted one messages:send per Android phone ({sends})")
    # Each device under its installation's platform (docs/nh.md): the gcm phone under Gcm.
    wanted = {"GcmOutcomeCounts": {"Success": 1}, "FcmV1OutcomeCounts": {"Success": 2}}
    check(counts == wanted, f"fcmv1 send: Completed, {wanted} (the outcome document counts {counts})")
    nothing_more("fcmv1 send", fcm=3, pushes=0, apns=0)

    # 2. The message alone (as create_fcm_v1_body writes it) to one installation.
    alone = {"data": {"richId": "8"}}
    only = send(create_fcm_v1_notification(create_fcm_v1_body(data=alone["data"])), "$InstallationId:{news-android-2}")
    counts = settled(only, "fcmv1 send to one installation", lambda: sum(map(len, phones.received.values())) >= 4)
    check(phones.received[FCM_PLAIN][1:] == [{**alone, "token": FCM_PLAIN}],
          f"the message alone reached news-android-2 as written ({phones.received[FCM_PLAIN][1:]})")
    check(counts == {"FcmV1OutcomeCounts": {"Success": 1}}, f"fcmv1 send to one installation: Completed, Success 1 under FcmV1 ({counts})")
    nothing_more("fcmv1 send to one installation", fcm=4, pushes=0, apns=0)

    # 3. A browser native send: both browsers decrypt the payload byte for byte; nothing else.
    payload = json.dumps({"title": "Hello", "body": "from NH, à bientôt", "url": "https://example.com/match/7"}, ensure_ascii=False)
    web = send(create_browser_notification(payload), "multi")
    counts = settled(web, "browser send", lambda: sum(len(b.received) for b in browsers) >= 2)
    for name, browser in [("news-browser-1", browser_template), ("news-browser-2", browser_plain)]:
        check([plain for plain, _ in browser.received] == [payload.encode()],
              f"{name} decrypted the browser payload byte for byte ({[plain for plain, _ in browser.received]})")
    pushes = log(arguments.webpush_log, "push")
    check(sorted((e.get("subscription"), e.get("status")) for e in pushes) == sorted((b.id, 201) for b in browsers),
          f"webpush-sim accepted one push per browser ({pushes})")
    check(counts == {"BrowserOutcomeCounts": {"Success": 2}}, f"browser send: Completed, Success 2 under Browser ({counts})")
    nothing_more("browser send", fcm=4, pushes=2, apns=0)

    # 4. A template send: the devices with a template alone, each rendered in its platform's form,
    # `minute` (not sent) empty.
    template = send(create_template_notification({"title": "Goal!"}), "multi")
    counts = settled(template, "template send", lambda: sum(map(len, phones.received.values())) >= 6
                     and sum(len(b.received) for b in browsers) >= 3 and len(apns_requests(arguments.apns_log)) >= apns_before + 1)
    refused = [e for e in fcm_sends(arguments.fcm_log) if e.get("status") != 200]
    check(refused == [], f"fcm-sim refused no message ({refused})")
    rendered = {"data": {"title": "Goal!", "minute": ""}}
    check(phones.received[FCM_TEMPLATE][1:] == [{**rendered, "android": {"priority": "HIGH"}, "token": FCM_TEMPLATE}],
          f"the fcmv1 phone got its template rendered as an FCM v1 message with its token ({phones.received[FCM_TEMPLATE][1:]})")
    check(phones.received[GCM_TEMPLATE][1:] == [{**rendered, "token": GCM_TEMPLATE}],
          f"the gcm phone got its template rendered, with its token ({phones.received[GCM_TEMPLATE][1:]})")
    check(len(phones.received[FCM_PLAIN]) == 2, f"the fcmv1 phone without a template got nothing ({phones.received[FCM_PLAIN][2:]})")
    shown = [plain for plain, _ in browser_template.received[1:]]
    check(len(shown) == 1 and isinstance(shown[0], bytes) and json.loads(shown[0]) == {"title": "Goal!", "minute": ""},
          f"the browser with a template decrypted its template rendered ({shown})")
    check(len(browser_plain.received) == 1, f"the browser without a template got nothing ({browser_plain.received[1:]})")
    iphone = [(e.get("device"), json.loads(e.get("payload", "{}"))) for e in apns_requests(arguments.apns_log)[apns_before:]]
    check(iphone == [(IPHONE, {"aps": {"alert": {"title": "Goal!", "body": ""}}})],
          f"the iPhone got its template rendered, and apns-sim nothing else from these sends ({iphone})")
    wanted = {"ApnsOutcomeCounts": {"Success": 1}, "GcmOutcomeCounts": {"Success": 1}, "FcmV1OutcomeCounts": {"Success": 1},
              "BrowserOutcomeCounts": {"Success": 1}}
    check(counts == wanted, f"template send: Completed, {wanted} (the outcome document counts {counts})")
    nothing_more("template send", fcm=6, pushes=3, apns=1)
    finish()


if __name__ == "__main__":
    main()
