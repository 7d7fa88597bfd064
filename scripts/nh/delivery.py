#!/usr/bin/env python3
"""NH sends delivered (scripts/test-nh-clients.sh): azure-notification-hub-unofficial registers two
iPhones in hub `news`, one with a template and one without, and sends a native apple push and a
template push to them; `news` has APNs credentials for apns-sim, whose request log (with payloads)
says what reached Apple. NH's rules: the native payload reaches both as written, the template push
only the iPhone with a template, rendered, a property the send lacks as an empty string; the
outcome documents count the same. Exits 1 on any mismatch."""

import argparse
import json
import subprocess
import time
from xml.etree import ElementTree

from azure_notification_hub.client import NotificationHubsClient
from azure_notification_hub.notifications import create_apple_notification, create_template_notification
from checks import check, finish, json_lines
from notificationhubs_rest_python.NotificationHub import AzureNotificationHub

NAMESPACE = "{http://schemas.microsoft.com/netservices/2010/10/servicebus/connect}"
WITH_TEMPLATE = "b1" * 32
PLAIN = "b2" * 32


def requests(log):
    """apns-sim's requests (the lines with a payload)."""
    return json_lines(log, lambda entry: "payload" in entry)


def wait(what, condition, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    check(False, f"{what} within {seconds} s")
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", required=True)
    parser.add_argument("--apns-log", required=True)
    parser.add_argument("--redis-port", required=True)
    arguments = parser.parse_args()
    node = NotificationHubsClient(arguments.full, "news")
    template = '{"aps":{"alert":{"title":"$(title)","body":"$(minute)"}},"richId":"$(richId)"}'
    node.create_or_update_installation({"installationId": "news-iphone-1", "platform": "apns", "pushChannel": WITH_TEMPLATE,
                                        "tags": ["e2e"], "templates": {"goal": {"body": template}}})
    node.create_or_update_installation({"installationId": "news-iphone-2", "platform": "apns", "pushChannel": PLAIN, "tags": ["e2e"]})
    silent = json.dumps({"aps": {"content-available": 1}, "richId": "7"})
    node.send_notification(create_apple_notification(silent, {"apns-priority": "5", "apns-push-type": "background"}),
                           tag_expression="e2e")
    node.send_notification(create_template_notification({"title": "Goal!"}), tag_expression="e2e")

    got = wait("3 pushes accepted by apns-sim", lambda: (lambda r: r if len(r) >= 3 else None)(requests(arguments.apns_log)))
    got = got or []
    by_device = {}
    for entry in got:
        check(entry.get("status") == 200, f"apns-sim accepted {entry.get('device', '')[:8]}…: {entry.get('status')} {entry.get('reason')}")
        by_device.setdefault(entry.get("device"), []).append(entry)
    plain = by_device.get(PLAIN, [])
    check([e["payload"] for e in plain] == [silent], f"the iPhone without a template got the native push alone, as written ({plain})")
    check(all(e.get("pushType") == "background" for e in plain), "as a background push (apns-push-type)")
    templated = sorted(by_device.get(WITH_TEMPLATE, []), key=lambda e: e["payload"] != silent)
    payloads = [e["payload"] for e in templated]
    check(len(payloads) == 2 and payloads[0] == silent, f"the iPhone with a template got the native push as written ({payloads})")
    rendered = json.loads(payloads[1]) if len(payloads) == 2 else {}
    check(rendered.get("aps", {}).get("alert") == {"title": "Goal!", "body": ""},
          f"and the template push rendered, the missing property empty ({payloads[1:]})")
    check(templated[1].get("pushType") == "alert" if len(templated) == 2 else False, "the template's alert went as an alert")

    # The outcome documents: every device's push counted under APNs.
    ids = {}
    port = arguments.redis_port
    for key in [k for k in subprocess.run(["redis-cli", "-p", port, "--scan", "--pattern", "richpush:app:news:*:notif:*"],
                                          capture_output=True, text=True, check=True).stdout.split() if k]:
        native = subprocess.run(["redis-cli", "-p", port, "HEXISTS", key, "native"], capture_output=True, text=True).stdout.strip()
        ids["native" if native == "1" else "template"] = key.rsplit(":", 1)[1]

    def outcome(kind):
        root = ElementTree.fromstring(node.get_notification_outcome_details(ids[kind])["_raw_xml"])
        if root.findtext(NAMESPACE + "State") != "Completed":
            return None
        counts = root.find(NAMESPACE + "ApnsOutcomeCounts")
        return {o.findtext(NAMESPACE + "Name"): int(o.findtext(NAMESPACE + "Count")) for o in counts} if counts is not None else {}

    check(wait("the native send's outcome: Completed, Success 2 under APNs", lambda: outcome("native") == {"Success": 2}) is True,
          "native send: Completed, Success 2 under APNs")
    check(wait("the template send's outcome: Completed, Success 1 under APNs", lambda: outcome("template") == {"Success": 1}) is True,
          "template send: Completed, Success 1 under APNs (the iPhone without a template is not its audience)")
    check(len(requests(arguments.apns_log)) == 3, "and apns-sim got nothing more")

    # $InstallationId:{…}: that device alone, whatever its tags.
    just = json.dumps({"aps": {"alert": "Just you"}})
    node.send_notification(create_apple_notification(just), tag_expression="$InstallationId:{news-iphone-2}")
    got = wait("a 4th push accepted by apns-sim", lambda: (lambda r: r if len(r) >= 4 else None)(requests(arguments.apns_log))) or []
    check([(e.get("device"), e.get("payload")) for e in got[3:]] == [(PLAIN, just)],
          f"a send to $InstallationId:{{news-iphone-2}} reached that iPhone alone ({[(e.get('device', '')[:6], e.get('payload')) for e in got[3:]]})")

    # A device registered as the tutorial's backend registers it: an NH registration (Atom XML).
    registered = "c2" * 32
    entry = ('<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><AppleTemplateRegistrationDescription '
             'xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><Tags>username:alice</Tags>'
             f'<DeviceToken>{registered}</DeviceToken><BodyTemplate><![CDATA[{{"aps":{{"alert":"$(message)"}}}}]]></BodyTemplate>'
             '</AppleTemplateRegistrationDescription></content></entry>')
    answer = node._client.request("POST", node._request_url("/registrations"), content=entry,
                                  headers=node._create_headers({"Content-Type": "application/atom+xml;type=entry;charset=utf-8"}))
    check(answer.status_code == 200, f"a template registration created ({answer.status_code}: {answer.text[:120]})")
    node.send_notification(create_template_notification({"message": "For Alice"}), tag_expression="username:alice")
    got = wait("a 5th push accepted by apns-sim", lambda: (lambda r: r if len(r) >= 5 else None)(requests(arguments.apns_log))) or []
    check([(e.get("device"), json.loads(e.get("payload", "{}"))) for e in got[4:]] == [(registered, {"aps": {"alert": "For Alice"}})],
          f"a template send to username:alice reached the registered iPhone, rendered ({[e.get('payload') for e in got[4:]]})")

    # A direct send (rest-python's `?direct`, valueless) to a known device's handle, and to one no
    # installation has: RichPush sends to devices it knows, and says so.
    rest = AzureNotificationHub(arguments.full, "news", 0)
    direct = {"aps": {"alert": "Direct"}}
    status, _ = rest.send_apple_notification(True, direct, device_handle=PLAIN)
    check(status == 201, f"rest-python: a direct send to a known handle answered {status}")
    got = wait("a 6th push accepted by apns-sim", lambda: (lambda r: r if len(r) >= 6 else None)(requests(arguments.apns_log))) or []
    check([(e.get("device"), json.loads(e.get("payload", "{}"))) for e in got[5:]] == [(PLAIN, direct)],
          f"the direct send reached that iPhone alone ({[e.get('payload') for e in got[5:]]})")
    try:
        rest.send_apple_notification(True, direct, device_handle="d0" * 32)
        check(False, "a direct send to a handle no installation has is refused")
    except Exception as error:  # the client raises a bare Exception for any status but 201
        check("404" in str(error), f"a direct send to a handle no installation has is 404 ({str(error)[:80]})")

    # A batch direct send, its body byte for byte as the .NET SDK writes it (neither PyPI client
    # has one): both iPhones (one named in upper case, as the JS SDK writes tokens) and a handle
    # no device has, which is skipped and counted.
    boundary = "nh-batch-multipart-boundary"
    batch = {"aps": {"alert": "Batch"}}
    devices = json.dumps([WITH_TEMPLATE.upper(), PLAIN, "d1" * 32])
    body = (f"\r\n--{boundary}\r\nContent-type: application/json;charset=utf-8\r\nContent-Disposition: inline; name=notification"
            f"\r\n\r\n{json.dumps(batch)}\r\n--{boundary}\r\nContent-type: application/json\r\n"
            f"Content-Disposition: inline; name=devices\r\n\r\n{devices}\r\n--{boundary}--")
    headers = {"Content-Type": f'multipart/mixed; boundary = "{boundary}"', "ServiceBusNotification-Format": "apple"}
    answer = node._client.request("POST", node._request_url("/messages/$batch") + "&direct", content=body,
                                  headers=node._create_headers(headers))
    check(answer.status_code == 201, f"a batch direct send answered {answer.status_code}: {answer.text[:160]}")
    check(answer.headers.get("RichPush-Skipped-Handles") == "1", f"the unknown handle is counted ({answer.headers.get('RichPush-Skipped-Handles')})")
    location = answer.headers.get("Location", "")
    check("/news/messages/" in location and "$batch" not in location, f"its Location names the message ({location})")
    got = wait("8 pushes accepted by apns-sim", lambda: (lambda r: r if len(r) >= 8 else None)(requests(arguments.apns_log))) or []
    check(sorted((e.get("device"), json.loads(e.get("payload", "{}"))["aps"]["alert"]) for e in got[6:]) ==
          sorted([(WITH_TEMPLATE, "Batch"), (PLAIN, "Batch")]), f"the batch reached both iPhones ({[e.get('payload') for e in got[6:]]})")
    batch_id = location.split("/messages/")[-1].split("?")[0]

    def batch_outcome():
        root = ElementTree.fromstring(node.get_notification_outcome_details(batch_id)["_raw_xml"])
        counts = root.find(NAMESPACE + "ApnsOutcomeCounts")
        return root.findtext(NAMESPACE + "State") == "Completed" and counts is not None and \
            {o.findtext(NAMESPACE + "Name"): int(o.findtext(NAMESPACE + "Count")) for o in counts} == {"Success": 2}
    check(wait("the batch's outcome: Completed, Success 2 under APNs", batch_outcome) is True, "batch direct send: Completed, Success 2")
    answer = node._client.request("POST", node._request_url("/messages/$batch") + "&direct",
                                  content=body.replace(devices, json.dumps(["d1" * 32])), headers=node._create_headers(headers))
    check(answer.status_code == 404, f"a batch of handles no device has is 404 ({answer.status_code})")
    answer = node._client.request("POST", node._request_url("/messages/$batch"), content=body, headers=node._create_headers(headers))
    check(answer.status_code == 400 and "?direct" in answer.text, f"a batch without ?direct is 400 ({answer.status_code} {answer.text[:80]})")

    # The tutorial's silent push as written carries "sound": "": refused when sent, not push by push.
    seed = json.dumps({"aps": {"content-available": 1, "sound": ""}, "richId": "42"})
    answer = node._client.request("POST", node._request_url("/messages"), content=seed, headers=node._create_headers(
        {"Content-Type": "application/json;charset=utf-8", "ServiceBusNotification-Format": "apple", "ServiceBusNotification-Tags": "e2e"}))
    check(answer.status_code == 400 and 'must not carry &quot;sound&quot;' in answer.text,
          f"a background apple push with a sound key is 400 at once ({answer.status_code} {answer.text[:120]})")
    finish()


if __name__ == "__main__":
    main()
