#!/usr/bin/env python3
"""Moving a hub (scripts/test-nh-clients.sh): `richpush apps nh-export` writes hub `news`'s
registrations in NH's bulk format, one registration description per line, and `richpush apps
nh-import` reads that file, and a file written as NH's export job writes it, into new hubs; each
import, exported again, gives the same registrations. A file with one bad line is refused whole,
naming the line, and writes nothing. Needs RICHPUSH_REDIS_URL; exits 1 on any mismatch."""

import argparse
import os
import re
import subprocess

from checks import check, finish

CONNECT = 'xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"'
INSTANCE = 'xmlns:i="http://www.w3.org/2001/XMLSchema-instance"'


def run(binary, *arguments):
    return subprocess.run([binary, *arguments], capture_output=True, text=True)


def exported(binary, hub):
    """The hub's registrations as nh-export writes them, without their ETag (the time of the last
    change), sorted."""
    answer = run(binary, "apps", "nh-export", hub)
    check(answer.returncode == 0, f"nh-export {hub} exits 0 ({answer.stderr.strip()[:200]})")
    return sorted(re.sub(r"<ETag>[^<]*</ETag>", "", line) for line in answer.stdout.splitlines() if line)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--dir", required=True)
    arguments = parser.parse_args()
    binary = arguments.bin

    news = exported(binary, "news")
    check(len(news) >= 3 and all(line.startswith("<") and "RegistrationDescription" in line for line in news),
          f"hub news exported as {len(news)} registration descriptions, one per line")
    check(any("AppleTemplateRegistrationDescription" in line and "<TemplateName>goal</TemplateName>" in line for line in news),
          "an installation's template exported as a template registration")
    path = os.path.join(arguments.dir, "news.txt")
    with open(path, "w") as file:
        file.write(run(binary, "apps", "nh-export", "news").stdout)
    for hub in ["moved", "nhfile", "refused"]:
        check(run(binary, "apps", "create", hub).returncode == 0, f"app {hub} created")
    answer = run(binary, "apps", "nh-import", "moved", path)
    check(answer.returncode == 0 and f"imported {len(news)} registrations" in answer.stdout,
          f"nh-import moved: {answer.stdout.strip()} {answer.stderr.strip()[:200]}")
    check(exported(binary, "moved") == news, "hub moved, exported, holds news's registrations")
    answer = run(binary, "apps", "nh-import", "moved", path)
    check(answer.returncode == 0 and f"0 new, {len(news)} updated" in answer.stdout, f"a second import updates them ({answer.stdout.strip()})")

    # As NH's export job writes a file: bare descriptions, CRLF line ends, one without a RegistrationId, an Atom entry.
    token = "e1" * 32
    lines = [
        f'<AppleRegistrationDescription {INSTANCE} {CONNECT}><ExpirationTime>9999-12-31T23:59:59.9999999Z</ExpirationTime>'
        f'<RegistrationId>8494219094374893219-7716932826468398151-1</RegistrationId><Tags>username:bob,sports</Tags>'
        f'<DeviceToken>{token}</DeviceToken></AppleRegistrationDescription>',
        f'<FcmV1TemplateRegistrationDescription {INSTANCE} {CONNECT}><Tags>news</Tags><FcmV1RegistrationId>fcm-token-1</FcmV1RegistrationId>'
        '<BodyTemplate><![CDATA[{"message":{"notification":{"title":"$(title)"}}}]]></BodyTemplate>'
        '<TemplateName>t1</TemplateName></FcmV1TemplateRegistrationDescription>',
        f'<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><GcmRegistrationDescription {CONNECT}>'
        '<RegistrationId>atom-1</RegistrationId><GcmRegistrationId>gcm-token-1</GcmRegistrationId></GcmRegistrationDescription>'
        '</content></entry>',
    ]
    path = os.path.join(arguments.dir, "nh-export-job.txt")
    with open(path, "w", newline="") as file:
        file.write("\r\n".join(lines) + "\r\n")
    answer = run(binary, "apps", "nh-import", "nhfile", path)
    check(answer.returncode == 0 and "imported 3 registrations" in answer.stdout, f"NH's file imported ({answer.stdout.strip()} {answer.stderr.strip()[:200]})")
    moved = exported(binary, "nhfile")
    check(len(moved) == 3, f"3 registrations in hub nhfile ({len(moved)})")
    check(any("<RegistrationId>8494219094374893219-7716932826468398151-1</RegistrationId>" in line and
              "<Tags>sports,username:bob</Tags>" in line and token in line for line in moved),
          "the Apple registration kept its id, tags and token")
    check(any("FcmV1TemplateRegistrationDescription" in line and "<TemplateName>t1</TemplateName>" in line for line in moved),
          "the FCM v1 template registration kept its template")
    check(any("<RegistrationId>atom-1</RegistrationId>" in line and "GcmRegistrationDescription" in line for line in moved),
          "the Atom entry's registration imported")

    # One bad line: nothing written, the line named.
    bad = [lines[0], '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', lines[2]]
    path = os.path.join(arguments.dir, "bad.txt")
    with open(path, "w") as file:
        file.write("\n".join(bad) + "\n")
    answer = run(binary, "apps", "nh-import", "refused", path)
    check(answer.returncode != 0 and f"{path}:2:" in answer.stderr and "nothing imported" in answer.stderr
          and "root:" not in answer.stderr, f"a file with a bad line 2 is refused whole ({answer.stderr.strip()[:200]})")
    check(exported(binary, "refused") == [], "and nothing of it was written")
    answer = run(binary, "apps", "nh-import", "nosuchhub", os.path.join(arguments.dir, "nh-export-job.txt"))
    check(answer.returncode != 0 and "no app 'nosuchhub'" in answer.stderr, f"an unknown hub is refused ({answer.stderr.strip()[:120]})")
    finish()


if __name__ == "__main__":
    main()
