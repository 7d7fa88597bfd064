"""Drives RichPush's browser device (GET /device) in headless Chromium through the rich-push flow.

Run by scripts/test-browser.sh, which starts the API, webpush-sim and a worker. Signs in on the
page, waits for its subscription and registration, sends a rich push with an image (curl, as
scripts/demo.sh does), waits on the page's step log for received, fetched and displayed, clicks
More, and checks that the image shown is the one sent. Then the push service ends the
subscription: the page subscribes again and re-registers (pushsubscriptionchange), a second push
reaches it at its new endpoint, and OK dismisses it. A PNG screenshot of each step goes to
--shots. The password comes in RICHPUSH_PASSWORD, never on a command line.
"""
import argparse
import hashlib
import json
import os
import signal
import struct
import subprocess
import sys
import time

from selenium.webdriver.common.by import By

from chromium import FlowError, start

STEPS_JS = "return Array.from(document.querySelectorAll('#log li')).map(li => Object.assign({text: li.textContent}, li.dataset))"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--page", required=True)
    parser.add_argument("--api", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--image", required=True)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--profile", required=True, help="Chromium's user data directory (a fresh one)")
    parser.add_argument("--spki", required=True, help="the push service's key hash, the only certificate error forgiven")
    parser.add_argument("--push", required=True, help="the push service's origin (https://127.0.0.1:PORT)")
    parser.add_argument("--push-ca", required=True, help="the push service's ca.pem")
    parser.add_argument("--deadline", type=float, default=30)
    args = parser.parse_args()
    password = os.environ["RICHPUSH_PASSWORD"]
    # A SIGTERM from the harness ends the run through `finally`, which stops the browser.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    # Chromium forgives the certificate errors of the push service's key only.
    driver = start(args.profile, extra_flags=[f"--ignore-certificate-errors-spki-list={args.spki}"])
    try:
        run(driver, args, password)
    except FlowError as error:
        print(f"error: {error}", file=sys.stderr)
        dump(driver, args.shots)
        return 1
    finally:
        driver.quit()
    return 0


def run(driver, args, password):
    os.makedirs(args.shots, exist_ok=True)
    shot_number = [0]

    def shot(name):
        shot_number[0] += 1
        path = os.path.join(args.shots, f"{shot_number[0]:02d}-{name}.png")
        driver.save_screenshot(path)
        print(f"    screenshot {path}")

    def wait_for(step, nth=1, **data):
        """The nth step named `step` with `data` in the page's log, once there is one."""
        deadline = time.monotonic() + args.deadline
        while time.monotonic() < deadline:
            steps = driver.execute_script(STEPS_JS)
            failed = [s for s in steps if s.get("step") == "failed"]
            if failed:
                raise FlowError(f"the page failed before '{step}': {failed[-1]['text']}")
            matches = [s for s in steps if s.get("step") == step and all(s.get(key) == value for key, value in data.items())]
            if len(matches) >= nth:
                print(f"==> page: {matches[nth - 1]['text']}")
                return matches[nth - 1]
            time.sleep(0.05)
        raise FlowError(f"no '{step}' step (#{nth}) within {args.deadline:.0f} s")

    driver.get(args.page)
    wait_for("ready")
    shot("page-loaded")
    driver.find_element(By.ID, "user").send_keys(args.user)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "sign-in-button").click()
    subscribed = wait_for("subscribed")
    wait_for("registered")
    wait_for("connected")
    shot("registered-and-listening")
    if password in driver.current_url or password in driver.page_source:
        raise FlowError("the password is in the page's URL or document")
    # The page's policy lets it reach only its own origin and the push service.
    blocked = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "document.addEventListener('securitypolicyviolation', (e) => done(e.effectiveDirective), {once: true});"
        "fetch('http://127.0.0.1:9/elsewhere').catch(() => {});"
        "setTimeout(() => done('not blocked'), 10000);")
    if blocked != "connect-src":
        raise FlowError(f"a connection to another origin was not refused by the page's policy: {blocked}")
    print("==> the page's Content-Security-Policy refuses a connection to another origin (connect-src)")

    notification = send(args, password)
    print(f"==> sent notification {notification}")
    wait_for("received", richId=notification)
    shot("received")
    fetched = wait_for("fetched", richId=notification)
    shot("fetched")
    wait_for("displayed", richId=notification)
    dialog = driver.find_element(By.ID, "notification")
    if not dialog.is_displayed() or "Check this image out!" not in dialog.text or "OK" not in dialog.text or "More" not in dialog.text:
        raise FlowError(f"the notification shown is not the message with OK and More: {dialog.text!r}")
    shot("displayed-ok-more")
    driver.find_element(By.ID, "more").click()
    opened = wait_for("opened", richId=notification)
    shot("opened-image")

    sent = open(args.image, "rb").read()
    digest = hashlib.sha256(sent).hexdigest()
    if fetched.get("bytes") != str(len(sent)) or opened.get("sha256") != digest:
        raise FlowError(f"the image opened is not the one sent: {opened.get('sha256')} ({fetched.get('bytes')} bytes), sent {digest} ({len(sent)} bytes)")
    width, height = struct.unpack(">II", sent[16:24])  # the PNG's IHDR
    image = driver.execute_script("const i = document.getElementById('image'); "
                                  "return {shown: !i.hidden && i.complete, width: i.naturalWidth, height: i.naturalHeight, src: i.src}")
    if not image["shown"] or (image["width"], image["height"]) != (width, height) or not image["src"].startswith("blob:"):
        raise FlowError(f"the image view does not show the {width}x{height} image sent: {image}")
    print(f"==> the page shows the image sent: {width}x{height}, SHA-256 {digest}")

    # The page's receipts reached RichPush: the notification's state is opened.
    deadline = time.monotonic() + args.deadline
    state = None
    while time.monotonic() < deadline:
        state = json.loads(curl(args, password, f"{args.api}/api/notifications/{notification}/status"))["state"]
        if state == "opened":
            break
        time.sleep(0.1)
    if state != "opened":
        raise FlowError(f"the notification's state is {state}, not opened")
    print(f"==> notification {notification} is opened at RichPush (the page's receipts)")

    # The push service ends the subscription (as a browser's service may at any time): the page is
    # told, subscribes again with new keys and re-registers under the same installation.
    registered = wait_for("registered")
    old_endpoint = subscribed["endpoint"]
    subscription_id = old_endpoint.rsplit("/", 1)[-1]
    ended = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", str(int(args.deadline)),
                            "--cacert", args.push_ca, "-X", "DELETE", f"{args.push}/subscription/{subscription_id}"],
                           capture_output=True, check=False)
    if ended.stdout.decode() != "204":
        raise FlowError(f"the push service did not end the subscription: {ended.stdout.decode()} {ended.stderr.decode(errors='replace')}")
    resubscribed = wait_for("resubscribed")
    if resubscribed.get("endpoint") in (None, old_endpoint) or resubscribed.get("installation") != registered.get("installation"):
        raise FlowError(f"the page did not register a new endpoint under its installation: {resubscribed['text']}")
    wait_for("connected", nth=2)
    shot("resubscribed")
    print(f"==> the push service ended the subscription; the page registered {resubscribed['endpoint']} under the same installation")
    second = send(args, password)
    print(f"==> sent notification {second} to the new subscription")
    wait_for("displayed", richId=second)
    shot("second-displayed")
    driver.find_element(By.ID, "ok").click()
    wait_for("dismissed", richId=second)
    if driver.find_element(By.ID, "notification").is_displayed():
        raise FlowError("OK did not dismiss the notification")
    shot("dismissed-ok")
    print(f"==> notification {second} displayed at the new endpoint and dismissed with OK")
    driver.find_element(By.ID, "sign-out").click()
    signed_out = wait_for("signed-out")
    if (signed_out.get("unregistered"), signed_out.get("unsubscribed")) != ("200", "204"):
        raise FlowError(f"signing out did not unregister and unsubscribe: {signed_out['text']}")
    shot("signed-out")
    print("==> the page's steps:")
    for s in driver.execute_script(STEPS_JS):
        print(f"    {s['text']}")


def curl(args, password, url, *extra):
    # The credentials go to curl on stdin (a config file), not on its command line.
    config = 'user = "%s:%s"\n' % (args.user, password.replace("\\", "\\\\").replace('"', '\\"'))
    answer = subprocess.run(["curl", "-sf", "--max-time", str(int(args.deadline)), "-K", "-", *extra, url],
                            input=config.encode(), capture_output=True, check=False)
    if answer.returncode != 0:
        raise FlowError(f"curl {url} failed ({answer.returncode}): {answer.stderr.decode(errors='replace')}")
    return answer.stdout


def send(args, password):
    body = curl(args, password, f"{args.api}/api/notifications", "-F", "message=Check this image out!", "-F", f"image=@{args.image}")
    return json.loads(body)["id"]


def dump(driver, shots):
    try:
        driver.save_screenshot(os.path.join(shots, "failure.png"))
        for s in driver.execute_script(STEPS_JS):
            print(f"    page: {s['text']}", file=sys.stderr)
        for entry in driver.get_log("browser"):
            print(f"    console: {entry.get('message')}", file=sys.stderr)
    except Exception as error:  # the browser may be gone; the error above stands
        print(f"    (no page state: {error})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
