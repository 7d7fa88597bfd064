#!/usr/bin/env python3
"""Two third-party NH clients against RichPush's NH listener (scripts/test-nh-clients.sh).

Each sends template pushes with tag expressions through its own code (tokens, URLs, headers as
it makes them); every refusal is checked over the wire. Writes what was accepted (tags and
properties) to --out for the shell to compare with what Redis holds. Exits 1 on any mismatch.
"""

import argparse
import json
import subprocess
from datetime import datetime, timedelta, timezone
from urllib.parse import urlparse
from xml.etree import ElementTree

from azure_notification_hub.client import AzureNHError, NotificationHubsClient, create_browser_installation
from azure_notification_hub.notifications import (create_apple_notification, create_browser_notification, create_fcm_v1_body,
                                                   create_fcm_v1_notification, create_template_notification)
from checks import check, finish
from notificationhubs_rest_python.NotificationHub import AzureNotificationHub
from wire import ATOM, CONNECT, laughs_short, xxe_file



def refused(call):
    """The status of the AzureNHError a client raised, or None if it did not."""
    try:
        call()
    except AzureNHError as error:
        return error.status_code, str(error)
    return None, ""


# RFC 8291's example subscription keys: a browser installation's pushChannel.
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
TOKEN = "a1" * 32


def NotificationsHubsClientFor(connection_string):
    return NotificationHubsClient(connection_string, "shop")


def installations(node, device):
    """Installations through the Node SDK's port: a device (Listen key) registers itself; the
    backend (Full key) reads, patches and deletes; each refusal is NH's."""
    apple = {"installationId": "iphone-1", "platform": "apns", "pushChannel": TOKEN, "tags": ["sports"],
             "templates": {"alert": {"body": '{"aps":{"alert":"$(message)"}}', "tags": ["sports"]}}}
    check(device.create_or_update_installation(apple) == {}, "node port: a device (Listen) puts its apple installation (200)")
    got = node.get_installation("iphone-1")
    check(got.get("platform") == "apns" and got.get("pushChannel") == TOKEN and got.get("tags") == ["sports"],
          f"node port: the installation reads back as put ({got})")
    check(got.get("templates", {}).get("alert", {}).get("body") == apple["templates"]["alert"]["body"],
          "node port: its template reads back")
    answer = node.update_installation("iphone-1", [
        {"op": "add", "path": "/tags", "value": "news"},
        {"op": "add", "path": "/userId", "value": "alice"},
        {"op": "add", "path": "/templates/badge", "value": '{"body":"{\\"aps\\":{\\"badge\\":\\"#(count)\\"}}"}'},
        {"op": "remove", "path": "/tags/sports"},
    ])
    check(answer == {}, f"node port: a JSON Patch (tags, userId, a template as a string) applied, 200 ({answer})")
    got = node.get_installation("iphone-1")
    check(got.get("tags") == ["news"] and got.get("userId") == "alice" and sorted(got.get("templates", {})) == ["alert", "badge"],
          f"node port: the patched installation ({got})")
    browser = create_browser_installation("browser-1", {"endpoint": "https://push.example.com/sub/1", "p256dh": P256DH, "auth": AUTH},
                                          tags=["web"])
    check(node.create_or_update_installation(browser) == {}, "node port: a browser installation put (200)")
    got = node.get_installation("browser-1")
    check(got.get("pushChannel") == {"endpoint": "https://push.example.com/sub/1", "p256dh": P256DH, "auth": AUTH},
          f"node port: the browser's pushChannel reads back ({got.get('pushChannel')})")
    check(node.delete_installation("browser-1") == {}, "node port: an installation deleted (204)")
    status, text = refused(lambda: node.get_installation("browser-1"))
    check(status == 404 and "Installation not found" in text, f"node port: a deleted installation is 404 ({status})")
    check(node.delete_installation("browser-1") == {}, "node port: deleting it again is 204, as in NH")
    status, text = refused(lambda: node.create_or_update_installation({**apple, "installationId": "x-1", "platform": "wns"}))
    check(status == 400 and "not served" in text, f"node port: platform wns is 400 ({status})")
    status, text = refused(lambda: node.create_or_update_installation(
        create_browser_installation("b-2", {"endpoint": "https://p.example/1", "p256dh": P256DH, "auth": AUTH},
                                    expiration_time="2030-01-01T00:00:00Z")))
    check(status == 400 and "expirationTime" in text, f"node port: an expiry is 400, installations here never expire ({status})")
    status, text = refused(lambda: node.update_installation("iphone-1", [{"op": "move", "path": "/tags", "value": "x"}]))
    check(status == 400 and "not served" in text, f"node port: a JSON Patch op NH does not serve is 400 ({status})")
    status, text = refused(lambda: node.update_installation("nobody", [{"op": "add", "path": "/tags", "value": "x"}]))
    check(status == 404, f"node port: patching a missing installation is 404 ({status})")


def hostile(node):
    """Hostile bodies over the wire, signed with a valid key: each is NH's 4xx with its XML error,
    never a 5xx or a dropped connection; the listener then still answers."""
    def raw(method, path, body, content_type="application/json", headers=None):
        extra = {"Content-Type": content_type, **(headers or {})}
        response = node._client.request(method, node._request_url(path), content=body, headers=node._create_headers(extra))
        return response.status_code, response.text

    deep = "[" * 10_000 + "]" * 10_000
    cases = [
        ("PUT", "/installations/h-1", deep, 400, "nested"),
        ("PUT", "/installations/h-1", '{"platform":"apns","pushChannel":"t","tags":' + '["a",' * 3 + '"b"]]]]}', 400, "nested"),
        ("PUT", "/installations/h-1", json.dumps({"platform": "apns", "pushChannel": "t", "tags": [f"t{i}" for i in range(5000)]}), 400,
         "array of up to 60"),
        ("PUT", "/installations/h-1", json.dumps({"platform": "apns", "pushChannel": "t", "pad": "x" * 70_000}), 413, "over the limit"),
        ("PUT", "/installations/h-1", b"\xff\xfe{}", 400, "the body must be"),
        ("PUT", "/installations/" + "x" * 65, json.dumps({"platform": "apns", "pushChannel": "t"}), 400, "installation id"),
        ("PUT", "/installations/a%2F..%2Fb", json.dumps({"platform": "apns", "pushChannel": "t"}), 400, "installation id"),
        ("PATCH", "/installations/iphone-1", json.dumps([{"op": "add", "path": "/tags", "value": "a"}] * 1000), 400, "1 to 64 operations"),
        ("PATCH", "/installations/iphone-1", json.dumps([{"op": "add", "path": "/" + "a/" * 400, "value": "x"}]), 400, "JSON Pointer"),
        ("PATCH", "/installations/iphone-1", json.dumps([{"op": "add", "path": "/templates/t", "value": deep[:4000]}]), 400, "JSON object"),
        ("POST", "/messages", json.dumps({"aps": {"alert": "x" * 5000}}), 400, "at most 4096"),
        ("POST", "/messages", "{", 400, "apple payload"),
    ]
    for method, path, body, status, words in cases:
        headers = {"ServiceBusNotification-Format": "apple", "ServiceBusNotification-Tags": "a"} if path == "/messages" else {}
        got, text = raw(method, path, body, headers=headers)
        check(got == status and words in text and "<Error>" in text,
              f"hostile {method} {path[:40]} ({len(body)} bytes): {status} naming '{words}' ({got}: {text[:120]})")
    check(node.get_installation("iphone-1").get("installationId") == "iphone-1", "the listener still answers after them")
    answer = node._client.get(node._request_url("/installations/iphone-1"), headers=node._create_headers())
    tracking = answer.headers.get("TrackingId")
    check(tracking and answer.headers.get("x-ms-correlation-request-id") == tracking,
          f"answers carry TrackingId and x-ms-correlation-request-id, as the JS SDK reads them ({dict(answer.headers)})")


def registrations(node, device):
    """Registrations (Atom XML) written as the JS SDK (POST registrationIDs, then PUT) and the .NET
    SDK (POST registrations, the base type with i:type) write them, over the wire with the Node
    SDK's port's tokens; listed, read and deleted through that client; refusals as NH's."""
    def raw(client, method, path, body=None, headers=None):
        extra = {"Content-Type": "application/atom+xml;type=entry;charset=utf-8", **(headers or {})}
        return client._client.request(method, client._request_url(path), content=body, headers=client._create_headers(extra))

    answer = raw(device, "POST", "/registrationIDs")
    location = answer.headers.get("location", "")
    check(answer.status_code == 201 and "/shop/registrationids/" in location, f"a device (Listen) gets a registration id: 201 {location}")
    registration = urlparse(location).path.split("/")[3]
    apple = (f'<AppleTemplateRegistrationDescription {CONNECT}><Tags>sports, vip</Tags><DeviceToken>{"c1" * 32}</DeviceToken>'
             '<BodyTemplate><![CDATA[{"aps":{"alert":"$(message)"}}]]></BodyTemplate><TemplateName>alert</TemplateName>'
             '<ApnsHeaders><ApnsHeader><Header>apns-priority</Header><Value>10</Value></ApnsHeader></ApnsHeaders>'
             '</AppleTemplateRegistrationDescription>')
    answer = raw(device, "PUT", f"/registrations/{registration}", ATOM.format(updated="<updated>2026-12-07T00:00:00Z</updated>",
                                                                              description=apple))
    check(answer.status_code == 200 and "<AppleTemplateRegistrationDescription" in answer.text
          and f"<RegistrationId>{registration}</RegistrationId>" in answer.text and "<Tags>sports,vip</Tags>" in answer.text,
          f"the JS SDK's PUT of a template registration: 200, the stored entry ({answer.status_code}: {answer.text[:160]})")
    fcm = (f'<RegistrationDescription {CONNECT} i:type="FcmV1RegistrationDescription"><RegistrationId i:nil="true"/>'
           '<Tags>android</Tags><FcmV1RegistrationId>fcm-token-1</FcmV1RegistrationId></RegistrationDescription>')
    answer = raw(node, "POST", "/registrations", ATOM.format(updated="", description=fcm))
    check(answer.status_code == 200 and "<FcmV1RegistrationDescription" in answer.text,
          f"the .NET SDK's POST (base type, i:type): 200, an FcmV1 registration ({answer.status_code}: {answer.text[:160]})")
    created = ElementTree.fromstring(answer.text).findtext("{http://www.w3.org/2005/Atom}title")

    listed = node.list_registrations()
    by_id = {entry.get("RegistrationId"): entry for entry in listed}
    check(registration in by_id and created in by_id, f"the Node SDK's port lists both ({sorted(by_id)})")
    got = node.get_registration(registration)
    check(got.get("Tags") == ["sports", "vip"] and got.get("BodyTemplate") == '{"aps":{"alert":"$(message)"}}'
          and got.get("DeviceToken") == "c1" * 32 and got.get("etag", "").startswith('W/"'),
          f"and reads the template registration back ({got})")
    answer = raw(node, "GET", "/tags/android/registrations")
    check(answer.status_code == 200 and created in answer.text and registration not in answer.text,
          f"registrations by tag: android's alone ({answer.status_code})")
    answer = raw(device, "GET", "/registrations")
    check(answer.status_code == 403, f"listing every registration needs Manage: a Listen key is 403 ({answer.status_code})")

    token = "c1" * 32
    def filtered(query):
        return node._client.get(node._request_url("/registrations") + "&$filter=" + query, headers=node._create_headers())

    answer = filtered(f"DeviceToken%20eq%20%27{token.upper()}%27")
    check(answer.status_code == 200 and registration in answer.text and created not in answer.text,
          f"$filter DeviceToken eq 'HEX' (the JS SDK's, upper case) finds that device's registration ({answer.status_code})")
    answer = filtered("ChannelUri+eq+%27fcm-token-1%27")
    check(answer.status_code == 200 and created in answer.text and registration not in answer.text,
          f"$filter ChannelUri eq '…', form-encoded (the .NET SDK's), finds the FCM one ({answer.status_code})")
    answer = filtered("Tags%20eq%20%27a%27")
    check(answer.status_code == 400, f"a $filter on another field is 400 ({answer.status_code})")
    etag = got["etag"][3:-1]
    stale = ATOM.format(updated="", description=apple.replace("sports, vip", "sports"))
    answer = raw(device, "PUT", f"/registrations/{registration}", stale, {"If-Match": '"1"'})
    check(answer.status_code == 412, f"an update at another version (If-Match) is 412 ({answer.status_code})")
    answer = raw(device, "PUT", f"/registrations/{registration}", stale, {"If-Match": f'"{etag}"'})
    check(answer.status_code == 200 and "<Tags>sports</Tags>" in answer.text, f"at its version, 200 ({answer.status_code})")
    check(node.delete_registration(created) == {}, "the Node SDK's port deletes one (no If-Match): 200")
    status, text = refused(lambda: node.get_registration(created))
    check(status == 404 and "Registration not found" in text, f"then it is 404 ({status})")
    status, text = refused(lambda: node.delete_registration(created))
    check(status == 404, f"and deleting it again is 404 ({status})")

    # The hostile documents' builders are scripts/nh/wire.py's, shared with scripts/security.sh
    # (which sends many more: scripts/security/cases_nh.py) and scripts/fuzz.sh.
    hostile_bodies = [
        (xxe_file(), "document type"),
        (laughs_short(), "document type"),
        ("<entry>" * 5000, "deeper"),
        (ATOM.format(updated="", description=f"<WindowsRegistrationDescription {CONNECT}/>"), "not served"),
        (ATOM.format(updated="", description=f"<AppleRegistrationDescription {CONNECT}><Tags>a b</Tags></AppleRegistrationDescription>"),
         "may only hold"),
        ("not xml", "not XML"),
    ]
    for body, words in hostile_bodies:
        answer = raw(device, "PUT", "/registrations/h-1", body)
        check(answer.status_code == 400 and words in answer.text,
              f"hostile registration ({len(body)} bytes): 400 naming '{words}' ({answer.status_code}: {answer.text[:100]})")


def redis(port, *args):
    return subprocess.run(["redis-cli", "-p", port, *args], capture_output=True, text=True, check=True).stdout


def outcomes(node, port):
    """Cancels the scheduled send of rest-python (its id read from Redis: that client reads no
    answer header) and reads NH's outcome document of a send."""
    ids = {}
    for key in [k for k in redis(port, "--scan", "--pattern", "richpush:app:shop:*:notif:*").split() if k]:
        fields = dict(zip(*[iter(redis(port, "HGETALL", key).split("\n"))] * 2))
        ids[(fields.get("target"), fields.get("properties"), fields.get("state"))] = key.rsplit(":", 1)[1]
    scheduled = ids.get(("vip", '{"message":"Later"}', "scheduled"))
    check(scheduled is not None, f"the scheduled send is in Redis, scheduled ({sorted(ids)})")
    check(node.cancel_scheduled_notification(scheduled) == {}, f"node port: scheduled send {scheduled} cancelled (200)")
    status, text = refused(lambda: node.cancel_scheduled_notification("999999"))
    check(status == 404, f"node port: cancelling an id the hub does not know is 404 ({status})")
    broadcast = ids.get(("*", '{"message":"Everyone"}', "queued"))
    details = node.get_notification_outcome_details(broadcast).get("_raw_xml", "")
    root = ElementTree.fromstring(details)
    namespace = "{http://schemas.microsoft.com/netservices/2010/10/servicebus/connect}"
    check(root.tag == namespace + "NotificationDetails", f"node port: the outcome is NH's NotificationDetails ({root.tag})")
    check(root.findtext(namespace + "NotificationId") == broadcast and root.findtext(namespace + "State") == "Enqueued",
          f"node port: outcome of {broadcast}: enqueued, no worker runs here ({details[:300]})")
    status, text = refused(lambda: node.get_notification_outcome_details("999999"))
    check(status == 404, f"node port: the outcome of an id the hub did not send is 404 ({status})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", required=True)
    parser.add_argument("--listen", required=True)
    parser.add_argument("--other", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--redis-port", required=True)
    arguments = parser.parse_args()
    sent = []

    # notificationhubs-rest-python: a hub-scoped token per request; only 201 counts as sent.
    rest = AzureNotificationHub(arguments.full, "shop", 0)
    for tags, properties in [("sports || news", {"message": "Goal!"}), ("vip", {"message": "For you", "badge": "3"})]:
        status, _ = rest.send_template_notification(properties, tags=tags)
        check(status == 201, f"rest-python: template send to {tags!r} answered {status}")
        sent.append({"tags": tags, "properties": properties})
    silent = {"aps": {"content-available": 1}, "richId": "42"}
    status, _ = rest.send_apple_notification(False, silent, tags="sports")
    check(status == 201, f"rest-python: a native apple send (the tutorial's silent push) answered {status}")
    sent.append({"tags": "sports", "native": {"format": "apns", "body": json.dumps(silent), "headers": {}}})
    later = datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(hours=1)
    status, _ = rest.send_template_notification({"message": "Later"}, tags="vip", scheduled_time=later)
    check(status == 201, f"rest-python: a scheduled template send ('T' quoted, no zone) answered {status}")
    sent.append({"tags": "vip", "properties": {"message": "Later"}, "state": "cancelled"})
    try:
        rest.send_google_notification(False, {"data": {"a": "b"}}, tags="sports")
        check(False, "rest-python: a gcm send is refused (FCM's first HTTP API is closed)")
    except Exception as error:  # the client raises a bare Exception for any status but 201
        check("400" in str(error), f"rest-python: a gcm send is refused with 400 ({str(error)[:60]})")

    # azure-notification-hub-unofficial (the Node SDK's Python port): a namespace-scoped token.
    node = NotificationHubsClient(arguments.full, "shop")
    expression = "(sports && !news) || vip"
    answer = node.send_notification(create_template_notification({"message": "Half time"}), tag_expression=expression)
    check(answer == {}, f"node port: template send to {expression!r} accepted (201, empty body: {answer})")
    sent.append({"tags": expression, "properties": {"message": "Half time"}})

    status, text = refused(lambda: NotificationHubsClient(arguments.full.replace("SharedAccessKey=", "SharedAccessKey=x"), "shop")
                           .send_notification(create_template_notification({"message": "x"}), tag_expression="a"))
    check(status == 401 and "InvalidSignature" in text, f"node port: a wrong key is 401 InvalidSignature ({status})")
    status, text = refused(lambda: NotificationHubsClient(arguments.listen, "shop")
                           .send_notification(create_template_notification({"message": "x"}), tag_expression="a"))
    check(status == 403 and "InsufficientClaims" in text, f"node port: a Listen rule sending is 403 InsufficientClaims ({status})")
    status, text = refused(lambda: NotificationHubsClient(arguments.other, "shop")
                           .send_notification(create_template_notification({"message": "x"}), tag_expression="a"))
    check(status == 401 and "InvalidSignature" in text, f"node port: hub news's key on hub shop is 401 ({status})")
    status, text = refused(lambda: NotificationHubsClient(arguments.full, "nohub")
                           .send_notification(create_template_notification({"message": "x"}), tag_expression="a"))
    check(status == 401, f"node port: a hub that does not exist answers as a wrong key, 401 ({status})")
    answer = node.send_notification(create_template_notification({"message": "Everyone"}))
    check(answer == {}, f"node port: a broadcast (no tags) accepted ({answer})")
    sent.append({"tags": "*", "properties": {"message": "Everyone"}})
    answer = node.send_notification(create_template_notification({"message": "Hi Alice"}), tag_expression="$UserId:{alice} && !muted")
    check(answer == {}, f"node port: a send to $UserId:{{alice}} accepted ({answer})")
    sent.append({"tags": "username:alice && !muted", "properties": {"message": "Hi Alice"}})
    status, text = refused(lambda: node.send_notification(create_template_notification({"message": "x"}),
                                                          tag_expression="a && b && c && d && e && f && g"))
    check(status == 400 and "NH allows" in text, f"node port: 7 tags with && are over NH's limit, 400 ({status})")
    background = {"aps": {"content-available": 1}, "richId": "43"}
    answer = node.send_notification(create_apple_notification(background, {"apns-priority": "5", "apns-push-type": "background"}),
                                    tag_expression="sports")
    check(answer == {}, f"node port: a native apple send with apns-* headers accepted ({answer})")
    sent.append({"tags": "sports", "native": {"format": "apns", "body": json.dumps(background),
                                              "headers": {"apns-priority": "5", "apns-push-type": "background"}}})
    answer = node.send_notification(create_fcm_v1_notification(create_fcm_v1_body(data={"richId": "44"})), tag_expression="android")
    check(answer == {}, f"node port: a native fcmv1 send accepted ({answer})")
    sent.append({"tags": "android", "native": {"format": "fcm", "body": '{"data":{"richId":"44"}}', "headers": {}}})
    answer = node.send_notification(create_browser_notification({"title": "Hi", "richId": "45"}), tag_expression="web")
    check(answer == {}, f"node port: a native browser send accepted ({answer})")
    sent.append({"tags": "web", "native": {"format": "webpush", "body": json.dumps({"title": "Hi", "richId": "45"}), "headers": {}}})
    soon = datetime.now(timezone.utc) + timedelta(minutes=30)
    answer = node.schedule_notification(soon, create_template_notification({"message": "Soon"}), tag_expression="vip")
    check(answer == {}, f"node port: a scheduled send (isoformat with +00:00) accepted ({answer})")
    sent.append({"tags": "vip", "properties": {"message": "Soon"}, "state": "scheduled"})
    status, text = refused(lambda: node.send_notification(create_apple_notification({"aps": {"alert": "x"}}, {"apns-topic": "com.other"}),
                                                          tag_expression="a"))
    check(status == 400 and "apns-topic" in text, f"node port: apns-topic is the app's, 400 ({status})")
    status, text = refused(lambda: node.send_notification(create_fcm_v1_notification(create_fcm_v1_body(data={"a": "b"}, token="t")),
                                                          tag_expression="a"))
    check(status == 400 and "names no &#39;token" in text, f"node port: an fcmv1 message with a token is 400 ({status}: {text[:200]})")
    status, text = refused(lambda: node.send_notification(create_template_notification({"message": "x"}), tag_expression="a",
                                                          test_send=True))
    check(status == 400 and "test sends" in text, f"node port: a test send is 400, not served yet ({status})")
    status, text = refused(lambda: node.schedule_notification(datetime.now(timezone.utc) + timedelta(days=8),
                                                              create_template_notification({"message": "x"}), tag_expression="a"))
    check(status == 400 and "7 days" in text, f"node port: a send scheduled over 7 days ahead is 400 ({status})")
    status, text = refused(lambda: node.send_notification(create_template_notification({"message": "x"}), tag_expression="a &&"))
    check(status == 400 and "ServiceBusNotification-Tags" in text, f"node port: a malformed tag expression is 400 ({status})")

    installations(node, NotificationsHubsClientFor(arguments.listen))
    hostile(node)
    registrations(node, NotificationsHubsClientFor(arguments.listen))
    outcomes(node, arguments.redis_port)

    with open(arguments.out, "w") as file:
        json.dump(sent, file)
    finish()


if __name__ == "__main__":
    main()
