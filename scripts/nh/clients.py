#!/usr/bin/env python3
"""Two third-party NH clients against RichPush's NH listener (scripts/test-nh-clients.sh).

Each sends template pushes with tag expressions through its own code (tokens, URLs, headers as
it makes them); every refusal is checked over the wire. Writes what was accepted (tags and
properties) to --out for the shell to compare with what Redis holds. Exits 1 on any mismatch.
"""

import argparse
import json
import sys

from azure_notification_hub.client import AzureNHError, NotificationHubsClient
from azure_notification_hub.notifications import create_apple_notification, create_template_notification
from notificationhubs_rest_python.NotificationHub import AzureNotificationHub

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def refused(call):
    """The status of the AzureNHError a client raised, or None if it did not."""
    try:
        call()
    except AzureNHError as error:
        return error.status_code, str(error)
    return None, ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", required=True)
    parser.add_argument("--listen", required=True)
    parser.add_argument("--other", required=True)
    parser.add_argument("--out", required=True)
    arguments = parser.parse_args()
    sent = []

    # notificationhubs-rest-python: a hub-scoped token per request; only 201 counts as sent.
    rest = AzureNotificationHub(arguments.full, "shop", 0)
    for tags, properties in [("sports || news", {"message": "Goal!"}), ("vip", {"message": "For you", "badge": "3"})]:
        status, _ = rest.send_template_notification(properties, tags=tags)
        check(status == 201, f"rest-python: template send to {tags!r} answered {status}")
        sent.append({"tags": tags, "properties": properties})
    try:
        rest.send_apple_notification(False, {"aps": {"alert": "native"}}, tags="sports")
        check(False, "rest-python: a native apple send is refused (not served yet)")
    except Exception as error:  # the client raises a bare Exception for any status but 201
        check("400" in str(error), f"rest-python: a native apple send is refused with 400 ({str(error)[:60]})")

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
    status, text = refused(lambda: node.send_notification(create_template_notification({"message": "x"})))
    check(status == 400 and "UnsupportedSend" in text, f"node port: a broadcast (no tags) is 400, not served yet ({status})")
    status, text = refused(lambda: node.send_notification(create_apple_notification({"aps": {"alert": "x"}}), tag_expression="a"))
    check(status == 400 and "UnsupportedFormat" in text, f"node port: a native apple send is 400, not served yet ({status})")
    status, text = refused(lambda: node.send_notification(create_template_notification({"message": "x"}), tag_expression="a &&"))
    check(status == 400 and "bad_target" in text, f"node port: a malformed tag expression is 400 ({status})")

    with open(arguments.out, "w") as file:
        json.dump(sent, file)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
