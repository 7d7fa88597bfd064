"""Headless Chromium for the browser tests: Debian's chromium driven by its chromium-driver.

A fresh profile per run (--user-data-dir), nothing fetched in the background, the page's console
kept for a failure's report, and chromedriver's log beside the profile.
"""
from selenium import webdriver
from selenium.webdriver.chrome.service import Service


class FlowError(Exception):
    """A step of a browser flow that did not happen: the run fails with this message."""


def start(profile, window="1100,900", extra_flags=()):
    """A headless Chromium with `profile` as its user data directory."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={window}",
                 f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", *extra_flags]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path="/usr/bin/chromedriver", log_output=profile + "-chromedriver.log")
    return webdriver.Chrome(options=options, service=service)
