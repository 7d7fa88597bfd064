"""Drives RichPush's operator console (/console) in headless Chromium.

Run by scripts/test-console.sh, which starts Redis with 30 dead letters and the API. Signs in as
an operator, watches the overview update live while jobs are enqueued, filters the dead letters,
counts all that match, adds more dead letters before confirming, confirms the counted number and
checks that exactly those were replayed; finds a notification by id, then one a worker pushed to a
registered device by search, with that device's timeline, and the device with its recent pushes;
cancels all the scheduled sends that match the same way, pauses and resumes an app, and does a
test send to a device with a worker it starts and stops;
then a viewer sees no action buttons and is refused when
it forges a POST from the page, and an admin sees the actions in the audit log. A PNG of every
page goes to --shots. Passwords come in the environment, never on a command line.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from chromium import FlowError, start

DEAD = "richpush:{q0}:dead"
STREAM = "richpush:{q0}:jobs"
SCHED = "richpush:{q0}:sched"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--redis-port", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--shots", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--deadline", type=float, default=30)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    driver = start(args.profile, window="1280,900")
    try:
        Flow(driver, args).run()
    except FlowError as error:
        print(f"error: {error}", file=sys.stderr)
        try:
            driver.save_screenshot(os.path.join(args.shots, "failure.png"))
            for entry in driver.get_log("browser"):
                print(f"    console: {entry.get('message')}", file=sys.stderr)
        except Exception as extra:
            print(f"    (no page state: {extra})", file=sys.stderr)
        return 1
    finally:
        driver.quit()
    return 0


class Flow:
    def __init__(self, driver, args):
        self.driver = driver
        self.args = args
        self.number = 0
        os.makedirs(args.shots, exist_ok=True)

    def shot(self, name):
        self.number += 1
        path = os.path.join(self.args.shots, f"{self.number:02d}-{name}.png")
        self.driver.save_screenshot(path)
        print(f"    screenshot {path}")

    def queued(self):
        """Jobs in the queue: in the stream, or waiting in their app's lanes (a replay admits them there)."""
        return int(self.redis("XLEN", STREAM)) + int(self.redis("HGET", SCHED, "waiting") or 0)

    def redis(self, *command):
        return subprocess.run(["redis-cli", "-p", self.args.redis_port, *command], check=True, capture_output=True, text=True).stdout.strip()

    def wait_for(self, what, condition):
        deadline = time.monotonic() + self.args.deadline
        while time.monotonic() < deadline:
            try:
                value = condition()
            except (StaleElementReferenceException, NoSuchElementException):
                # The page changed under the reference, or the next page has not yet drawn what
                # the condition reads (a click's navigation still loading): look again.
                value = None
            except WebDriverException as error:
                # Chromium also says so as an inspector error when a navigation replaced the
                # document between finding an element and reading it (CI saw it once).
                if "does not belong to the document" not in str(error) and "No node with given id" not in str(error):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise FlowError(f"timed out waiting for {what}")

    def text(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def sign_in(self, user, variable):
        self.driver.delete_all_cookies()
        self.driver.get(self.args.base + "/console/login")
        self.driver.find_element(By.ID, "user").send_keys(user)
        self.driver.find_element(By.ID, "password").send_keys(os.environ[variable])
        self.driver.find_element(By.CSS_SELECTOR, "form.signin button").click()
        self.wait_for(f"{user}'s overview", lambda: self.driver.current_url.endswith("/console") and "Overview" in self.driver.title)

    def run(self):
        d = self.driver
        d.get(self.args.base + "/console")
        self.wait_for("the sign-in page", lambda: "/console/login" in d.current_url)
        self.shot("sign-in")
        self.sign_in("ops", "RICHPUSH_OPS_PASSWORD")
        print("==> signed in as ops (operator)")
        self.wait_for("the first live update", lambda: int(d.find_element(By.TAG_NAME, "body").get_attribute("data-updates") or "0") >= 1)
        self.shot("overview")
        subprocess.run([self.args.bin, "enqueue", "--type", "console-test-live", "--payload", "x", "--count", "12"], check=True, capture_output=True)
        # Read in one script: the live updates replace the rows under any element reference.
        rows = "return Array.from(document.querySelectorAll('#apps tbody tr')).map(r => r.innerText.replace(/\\s+/g, ' '))"
        row = self.wait_for("12 waiting jobs in the live overview", lambda: next(
            (r for r in d.execute_script(rows) if r.startswith("default 12 ")), None))
        print(f"==> the overview updated live: {row}")
        self.shot("overview-live")
        # Hidden tab: the script closes the stream, so no update arrives; shown again: they resume.
        updates = lambda: int(d.find_element(By.TAG_NAME, "body").get_attribute("data-updates") or "0")
        d.execute_script("Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
                         "document.dispatchEvent(new Event('visibilitychange'));")
        paused_at = updates()
        if "paused" not in self.text("#live"):
            raise FlowError(f"hiding the tab did not pause the live updates: {self.text('#live')}")
        time.sleep(2.5)  # an absence: two and a half intervals without an update
        if updates() != paused_at:
            raise FlowError(f"{updates() - paused_at} update(s) arrived while the tab was hidden")
        d.execute_script("Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
                         "document.dispatchEvent(new Event('visibilitychange'));")
        self.wait_for("live updates to resume", lambda: updates() > paused_at)
        print("==> live updates pause while the tab is hidden and resume when it is shown")
        d.set_window_size(390, 844)
        d.refresh()
        self.wait_for("the overview at phone width", lambda: "Overview" in d.title)
        self.shot("overview-phone")
        d.set_window_size(1280, 900)

        d.get(self.args.base + "/console/dead-letters?text=console-test-bogus")
        rows = d.find_elements(By.CSS_SELECTOR, "#dead-letters tbody tr")
        if len(rows) != 30:
            raise FlowError(f"expected 30 dead letters listed, saw {len(rows)}")
        self.shot("dead-letters")
        # These died before any push (no handler): no platform failed, so a platform finds none.
        Select(d.find_element(By.ID, "f-platform")).select_by_value("apns")
        d.find_element(By.XPATH, "//form[@role='search']//button[contains(., 'Filter')]").click()
        self.wait_for("the platform filter", lambda: "platform=apns" in self.text("main"))
        if d.find_elements(By.CSS_SELECTOR, "#dead-letters tbody tr:not(.empty)"):
            raise FlowError("dead letters that failed before any push matched platform apns")
        d.get(self.args.base + "/console/dead-letters?text=console-test-bogus")
        print("==> the platform filter is applied from its select (none of these failed on a platform)")
        d.find_element(By.XPATH, "//button[contains(., 'Replay all that match')]").click()
        count = self.wait_for("the count", lambda: d.find_elements(By.ID, "match-count"))[0].text
        if count != "30":
            raise FlowError(f"the count said {count}, not 30")
        self.shot("confirm")
        # More die between the count and the confirmation: they must stay dead.
        for index in range(5):
            self.redis("XADD", DEAD, "*", "v", "1", "type", "console-test-bogus", "payload", "late", "enq", "1", "app", "_", "lane", "now",
                       "err", f"console-test-bogus died after the count #{index}", "deadAt", "1")
        queued_before = self.queued()
        d.find_element(By.ID, "confirm").send_keys("30")
        d.find_element(By.CSS_SELECTOR, "form.confirm button").click()
        # The answer is written as the replay goes: a line per batch, then the result.
        heading = self.wait_for("the replay's answer", lambda: [h.text for h in d.find_elements(By.ID, "result") if h.text.startswith("Replayed")])
        if heading[0] != "Replayed 30 dead letters":
            raise FlowError(f"the replay said '{heading[0]}'")
        progress = [line.text for line in d.find_elements(By.CSS_SELECTOR, "#progress li")]
        if progress != ["Replayed 30 of 30"]:
            raise FlowError(f"the replay's progress said {progress}, not its one batch")
        self.shot("replayed")
        left, added = int(self.redis("XLEN", DEAD)), self.queued() - queued_before
        if left != 5 or added != 30:
            raise FlowError(f"expected 5 dead letters left (those after the count) and 30 jobs back in the queue, saw {left} and {added}")
        print("==> replayed exactly the 30 counted, its progress shown as it went; the 5 that died after the count stay dead")
        d.get(self.args.base + "/console/dead-letters?text=after+the+count")
        d.find_element(By.ID, "select-all").click()
        ticked = [box for box in d.find_elements(By.CSS_SELECTOR, "input[name=id]") if box.is_selected()]
        if len(ticked) != 5:
            raise FlowError(f"select all ticked {len(ticked)} dead letters, not the 5 shown")
        self.shot("purge-selected")
        d.find_element(By.XPATH, "//button[contains(., 'Purge selected')]").click()
        heading = self.wait_for("the purge's answer", lambda: [h.text for h in d.find_elements(By.TAG_NAME, "h1") if h.text.startswith("Purged")])
        if heading[0] != "Purged 5 dead letters" or int(self.redis("XLEN", DEAD)) != 0:
            raise FlowError(f"the purge said '{heading[0]}' and left {self.redis('XLEN', DEAD)} dead letters")
        print("==> selected all 5 with one box and purged them")

        # A notification found by id: ops sends one (to its own tag, no device), the console shows it.
        sent = subprocess.run(["curl", "-sf", "-u", "ops:" + os.environ["RICHPUSH_OPS_PASSWORD"], "-F", "message=Console <check> & more",
                               "-F", "image=@Sources/RichPushAPI/Resources/default-image.png", self.args.base + "/api/notifications"],
                              check=True, capture_output=True, text=True).stdout
        notification = json.loads(sent)["id"]
        d.get(f"{self.args.base}/console/notifications?id={notification}")
        found = self.text("main")
        if f"Notification {notification}: queued" not in found or "Console <check> & more" not in found:
            raise FlowError(f"the notification page does not show notification {notification} as sent: {found[:300]}")
        self.shot("notification")
        print(f"==> notification {notification} found by id, its message shown as text")
        self.timeline_and_devices()
        self.rates_chart_and_templates()

        self.queues()
        self.test_send()
        self.webhooks()

        self.sign_in("view", "RICHPUSH_VIEW_PASSWORD")
        d.get(self.args.base + "/console/dead-letters")
        if d.find_elements(By.TAG_NAME, "button") and any("Replay" in b.text for b in d.find_elements(By.TAG_NAME, "button")):
            raise FlowError("the viewer sees a Replay button")
        if d.find_elements(By.CSS_SELECTOR, "input[type=checkbox]"):
            raise FlowError("the viewer sees selection boxes")
        self.shot("viewer-dead-letters")
        status = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/console/dead-letters/count', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded',
                  'Accept': 'application/json'}, body: 'text=console-test-bogus'}).then(r => done(r.status), e => done(String(e)));
        """)
        if status != 403:
            raise FlowError(f"the viewer's forged count answered {status}, not 403")
        print("==> the viewer sees no action and its forged POST is refused with 403")

        self.sign_in("root", "RICHPUSH_ROOT_PASSWORD")
        d.get(self.args.base + "/console/audit")
        audit = self.text("#audit")
        for action in ("dlq.replay-matching", "scheduled.cancel-matching", "app.pause", "app.resume", "test-send"):
            if action not in audit:
                raise FlowError(f"the audit log does not show ops's {action}")
        self.shot("audit")
        print("==> the admin reads the replay in the audit log")

    def rates_chart_and_templates(self):
        """The overview's rate columns and the workers' share chart (a worker has run by now),
        then a template rendered in the preview, as the API renders it."""
        d = self.driver
        # A worker that stays while the overview is read (a worker that stops leaves the group),
        # stopped and waited for by this step; three notifications for it to process.
        worker = subprocess.Popen([self.args.bin, "worker", "--consumer", "console-chart", "--log-level", "warning"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for number in range(3):
                subprocess.run(["curl", "-sf", "-u", "ops:" + os.environ["RICHPUSH_OPS_PASSWORD"], "-F", f"message=Chart {number}",
                                "-F", "image=@Sources/RichPushAPI/Resources/default-image.png", self.args.base + "/api/notifications"],
                               check=True, capture_output=True)

            def chart():
                d.get(self.args.base + "/console")  # the chart is drawn at page load
                found = d.find_elements(By.CSS_SELECTOR, "svg[data-chart='workers-share'] rect.bar[data-label='console-chart']")
                return found if found and int(found[0].get_attribute("data-count")) >= 3 else None
            self.wait_for("the workers' chart with console-chart's 3 jobs", chart)
            self.wait_for("a live update", lambda: int(d.find_element(By.TAG_NAME, "body").get_attribute("data-updates") or "0") >= 2)
            header = self.text("#apps thead")
            if "Sent/s" not in header or "Done/s" not in header or "Dead-lettered/s" not in header or "Failed/s by reason" not in header:
                raise FlowError(f"the overview has no rate columns: {header}")
            # The script's failures cell: "-" before a rate, "none", or codes with their rates.
            cells = d.execute_script("return Array.from(document.querySelectorAll('#apps tbody tr:not(.empty)'))"
                                     ".map(function (row) { return row.lastElementChild.textContent; })")
            pattern = re.compile(r"^(-|none|[A-Za-z0-9_.-]+ [0-9]+\.[0-9](, [A-Za-z0-9_.-]+ [0-9]+\.[0-9])*(, \+[0-9]+ more [0-9]+\.[0-9])?)$")
            if not cells or not all(pattern.match(cell) for cell in cells):
                raise FlowError(f"the overview's failed/s by reason cells: {cells}")
            d.set_window_size(1280, 1100)
            self.shot("overview-workers-chart")
            d.set_window_size(1280, 900)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        print("==> the overview shows rates per second and each worker's share as a chart")

        d.get(self.args.base + "/console/templates")
        d.find_element(By.ID, "template").send_keys('{"aps":{"alert":".(title, 10)","badge":"#(n)"}}')
        d.find_element(By.ID, "properties").send_keys('{"title": {"en": "Hello world again", "fr": "Bonjour tout le monde"}, "n": "4"}')
        d.find_element(By.ID, "locale").send_keys("fr_CA")
        d.find_element(By.CSS_SELECTOR, "form.preview button").click()
        output = self.wait_for("the rendered template", lambda: d.find_elements(By.ID, "output"))
        expected = json.loads(subprocess.run(
            ["curl", "-sf", "-u", "ops:" + os.environ["RICHPUSH_OPS_PASSWORD"], "-H", "Content-Type: application/json", "--data-binary",
             json.dumps({"template": '{"aps":{"alert":".(title, 10)","badge":"#(n)"}}', "locale": "fr_CA",
                         "properties": {"title": {"en": "Hello world again", "fr": "Bonjour tout le monde"}, "n": "4"}}),
             self.args.base + "/api/templates/render"], check=True, capture_output=True, text=True).stdout)
        if json.loads(output[0].text) != expected["output"]:
            raise FlowError(f"the preview shows {output[0].text}, the API renders {expected['output']}")
        d.set_window_size(1280, 1650)  # the whole page: the form and what it rendered
        self.shot("template-preview")
        d.set_window_size(1280, 900)
        print(f"==> the template preview renders as POST /api/templates/render does: {output[0].text}")

    def api(self, method, path, body=None, user="ops"):
        """curl as `user` (password from the environment); the answer's JSON (or its text)."""
        command = ["curl", "-sf", "-X", method, "-u", f"{user}:" + os.environ[f"RICHPUSH_{user.upper()}_PASSWORD"]]
        if body is not None:
            command += ["-H", "Content-Type: application/json", "--data-binary", json.dumps(body)]
        out = subprocess.run(command + [self.args.base + path], check=True, capture_output=True).stdout.decode(errors="replace")
        try:
            return json.loads(out)
        except ValueError:
            return out

    def timeline_and_devices(self):
        """A real delivery: ops registers a device, sends to it, a worker pushes it through the
        simulated hub, the device fetches the payload and reports it displayed and opened; the
        console finds the notification by search, shows the device's timeline, and finds the
        device with its recent pushes."""
        d = self.driver
        handle = "console0timeline0token"
        device = self.api("POST", f"/api/register?handle={handle}")
        self.api("PUT", f"/api/register/{device}", {"Platform": "apns", "Handle": handle, "Tags": ["console-demo"]})
        sent = subprocess.run(["curl", "-sf", "-u", "ops:" + os.environ["RICHPUSH_OPS_PASSWORD"], "-F", "message=Timeline <demo>",
                               "-F", "image=@Sources/RichPushAPI/Resources/default-image.png", self.args.base + "/api/notifications"],
                              check=True, capture_output=True, text=True).stdout
        notification = json.loads(sent)["id"]
        # The worker this step starts, stopped (and waited for) by this step.
        worker = subprocess.Popen([self.args.bin, "worker", "--consumer", "console-timeline", "--log-level", "warning"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def delivered():
                status = self.api("GET", f"/api/notifications/{notification}/status")
                return [x for x in status.get("devices", []) if x["installation"] == device and x["state"] in ("sent", "held")]
            self.wait_for("the worker's push to the device", delivered)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        self.api("GET", f"/api/notifications/{notification}?installation={device}")
        for kind in ("displayed", "opened"):
            self.api("POST", f"/api/notifications/{notification}/receipts", {"kind": kind, "installation": device})
        print(f"==> notification {notification} pushed to device {device} by a worker, fetched, displayed and opened")

        d.get(self.args.base + "/console/notifications")
        d.find_element(By.ID, "n-creator").send_keys("ops")
        d.find_element(By.ID, "n-tag").send_keys("username:ops")
        d.find_element(By.ID, "n-from").send_keys("-1h")
        d.find_element(By.CSS_SELECTOR, "form.filter button").click()
        # The form's page listed the newest already: wait for the search's own page.
        self.wait_for("the search's page", lambda: "creator=ops" in d.current_url)
        link = self.wait_for("the notification in the search's results",
                             lambda: d.find_elements(By.XPATH, f"//table[@id='notifications']//a[text()='{notification}']"))
        self.shot("notification-search")
        link[0].click()
        row = self.wait_for("the device's row in the timeline", lambda: [r for r in d.find_elements(By.CSS_SELECTOR, "#timeline tbody tr") if device in r.text])
        cells = [c.text for c in row[0].find_elements(By.TAG_NAME, "td")]
        # platform, queued, sent, fetched, displayed, opened: each step with its time.
        if cells[0] != "apns" or not all(cell.startswith("20") and cell.endswith("Z") for cell in cells[1:6]):
            raise FlowError(f"the timeline does not show every step's time: {cells}")
        if "richMessage" not in self.text("pre.json"):
            raise FlowError("the notification's page lacks its rendered push")
        self.wait_for("the payload's image", lambda: d.find_element(By.ID, "payload").get_attribute("naturalWidth") not in (None, "0"))
        d.set_window_size(1280, 1500)  # the whole page: record, payload, rendered push and timeline
        self.shot("notification-timeline")
        d.set_window_size(1280, 900)
        print(f"==> found by creator, tag and time; the timeline shows queued, sent, fetched, displayed and opened: {cells[1:6]}")

        d.get(self.args.base + "/console/devices")
        d.find_element(By.ID, "d-user").send_keys("ops")
        d.find_element(By.ID, "d-handle").send_keys("console0")
        d.find_element(By.CSS_SELECTOR, "form.filter button").click()
        self.wait_for("the search's page", lambda: "user=ops" in d.current_url)
        link = self.wait_for("the device in the devices' results", lambda: d.find_elements(By.XPATH, f"//table[@id='devices']//a[contains(., '{device}')]"))
        self.shot("devices")
        link[0].click()
        self.wait_for("the device's recent pushes", lambda: [r for r in d.find_elements(By.CSS_SELECTOR, "#pushes tbody tr") if r.text.startswith(str(notification))])
        self.shot("device")
        print(f"==> device {device} found by user and token prefix, notification {notification} among its recent pushes")

    def schedule(self):
        """A text notification scheduled an hour ahead; its id."""
        due = int(time.time() * 1000) + 3_600_000
        return int(self.api("POST", "/api/notifications", {"richType": "text", "payload": "p", "message": "later", "sendAt": due})["id"])

    def queues(self):
        """Cancels all the scheduled sends that match (exactly the counted ones), then pauses and resumes the default app."""
        d = self.driver
        counted = [self.schedule() for _ in range(3)]
        d.get(self.args.base + "/console/queues?kind=scheduled")
        rows = d.find_elements(By.CSS_SELECTOR, "#delayed tbody tr")
        if len(rows) != 3:
            raise FlowError(f"expected 3 scheduled sends listed, saw {len(rows)}")
        self.shot("queues")
        d.find_element(By.XPATH, "//button[contains(., 'Cancel all scheduled sends that match')]").click()
        count = self.wait_for("the cancel's count", lambda: d.find_elements(By.ID, "match-count"))[0].text
        if count != "3":
            raise FlowError(f"the cancel's count said {count}, not 3")
        self.shot("cancel-confirm")
        later = self.schedule()  # scheduled after the count: must stay scheduled
        d.find_element(By.ID, "confirm").send_keys("3")
        d.find_element(By.CSS_SELECTOR, "form.confirm button").click()
        heading = self.wait_for("the cancel's answer", lambda: [h.text for h in d.find_elements(By.ID, "result") if h.text.startswith("Cancelled")])
        if heading[0] != "Cancelled 3 scheduled sends":
            raise FlowError(f"the cancel said '{heading[0]}'")
        progress = [line.text for line in d.find_elements(By.CSS_SELECTOR, "#progress li")]
        if progress != ["Cancelled 3 of 3"]:
            raise FlowError(f"the cancel's progress said {progress}, not its one batch")
        states = [self.api("GET", f"/api/notifications/{n}/status")["state"] for n in counted + [later]]
        if states != ["cancelled"] * 3 + ["scheduled"]:
            raise FlowError(f"expected the 3 counted cancelled and the later one scheduled, saw {states}")
        d.get(self.args.base + "/console/queues?kind=scheduled")
        if len(d.find_elements(By.CSS_SELECTOR, "#delayed tbody tr")) != 1:
            raise FlowError("the queues page does not show the one scheduled after the count")
        print("==> cancelled exactly the 3 counted scheduled sends; the one scheduled after the count stays")
        # Retry now: nothing is retrying here, and the count says so rather than confirming 0.
        d.get(self.args.base + "/console/queues?kind=retry")
        d.find_element(By.XPATH, "//button[contains(., 'Retry all retries that match now')]").click()
        self.wait_for("the retry count's answer", lambda: "Nothing to retry" in self.text("main"))
        print("==> retry now counts the retries that match (none here)")
        d.get(self.args.base + "/console/queues?kind=scheduled")
        d.find_element(By.ID, "p-app").clear()
        d.find_element(By.ID, "p-app").send_keys("default")
        d.find_element(By.XPATH, "//button[contains(., 'Pause sending')]").click()
        self.wait_for("the paused app listed", lambda: d.find_elements(By.ID, "paused") and "default" in self.text("#paused"))
        self.shot("paused")
        d.get(self.args.base + "/console")
        rows = "return Array.from(document.querySelectorAll('#apps tbody tr')).map(r => r.innerText.replace(/\\s+/g, ' '))"
        self.wait_for("the overview to show default paused", lambda: any(r.startswith("default · paused") for r in d.execute_script(rows)))
        d.get(self.args.base + "/console/queues")
        d.find_element(By.ID, "p-app").send_keys("default")
        d.find_element(By.XPATH, "//button[contains(., 'Resume sending')]").click()
        self.wait_for("no app paused", lambda: "No app is paused." in self.text("main"))
        print("==> paused the default app (the overview says so) and resumed it")

    def test_send(self):
        """A test send to a registered device, with a worker running; waits for the device's outcome on the result page."""
        d = self.driver
        registration = self.api("POST", "/api/register?handle=console-phone")
        self.api("PUT", f"/api/register/{registration}", {"Platform": "apns", "Handle": "console-phone", "Tags": []})
        log = open(os.path.join(os.path.dirname(self.args.profile), "test-send-worker.log"), "w")
        worker = subprocess.Popen([self.args.bin, "worker", "--consumer", "console-test-send", "--log-level", "warning"], stdout=log, stderr=log)
        try:
            d.get(self.args.base + "/console/test-send")
            d.find_element(By.ID, "t-installations").send_keys(registration)
            d.find_element(By.ID, "t-message").send_keys("Console test <send>")
            d.find_element(By.XPATH, "//button[text()='Send']").click()
            self.wait_for("the result page", lambda: d.find_elements(By.ID, "test-send"))
            outcome = self.wait_for("the device's outcome", lambda: next(
                (o.text for o in d.find_elements(By.CSS_SELECTOR, "#test-send td.outcome") if o.text and o.text != "queued"), None))
            if outcome not in ("sent", "held", "fetched", "displayed", "opened"):
                raise FlowError(f"the test send's device ended {outcome}")
            self.shot("test-send")
            print(f"==> test send to {registration}: {outcome}, shown on its result page")
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            log.close()

    def webhooks(self):
        """A webhook made through the API is listed without its secret, nor its URL's query."""
        d = self.driver
        hook = self.api("POST", "/api/webhooks", {"url": "https://hooks.example.com/richpush?token=console-secret-token",
                                                  "events": ["sent", "failed"], "description": "ops <hook>"})
        d.get(self.args.base + "/console/webhooks")
        listed = self.text("#webhooks")
        if hook["id"] not in listed or "ops <hook>" not in listed or "console-secret-token" in d.page_source or hook["secret"] in d.page_source:
            raise FlowError(f"the webhooks page does not list {hook['id']} as it should: {listed[:300]}")
        d.find_element(By.LINK_TEXT, hook["id"]).click()
        self.wait_for("the webhook's attempts and dead letters", lambda: d.find_elements(By.ID, "webhook-dead"))
        self.shot("webhooks")
        print(f"==> webhook {hook['id']} listed without its secret or its URL's query")


if __name__ == "__main__":
    sys.exit(main())
