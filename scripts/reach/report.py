"""The reach report of scripts/bench-reach.sh: what every simulated device did with every push.

Usage: report.py STRATEGY WORK DEVICES TIME_SCALE. Reads WORK/device.log (device-sim's JSON
events) and WORK/sends.jsonl (each notification's id and send time). A pair (notification,
device) is shown with its content when the device showed it after fetching it (the app's local
notification, or the extension's attachment), shown as text when the system showed the alert's
text alone (iOS's original alert, Android's notification in the shade), or never; shown at once
when the device received it within 30 s (real time) of the hub's send and no rule deferred it
nor a catch-up found it. The last line is the summary.
"""
import collections
import json
import sys

strategy, work, devices, time_scale = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
sends = [json.loads(line) for line in open(f"{work}/sends.jsonl") if line.strip()]
ids = [str(send["id"]) for send in sends]
events = collections.defaultdict(list)  # (richId, device) -> events in order
condition = {}
online_at = {}  # device -> when it came back (µs since 1970), for the devices offline at the start
budget_spent = collections.Counter()  # platform -> background pushes iOS deferred or coalesced
for line in open(f"{work}/device.log", errors="replace"):
    if not line.startswith("{"):
        continue
    try:
        event = json.loads(line)
    except ValueError:
        continue
    device = event.get("device")
    if event.get("event") == "registered":
        condition[device] = (event.get("detail") or "condition ?").split("condition ")[-1]
    elif event.get("event") == "online":
        online_at[device] = event.get("at") or 0
    elif event.get("richId") is not None:
        events[(event["richId"], device)].append(event)
        if event.get("event") in ("deferred", "coalesced") and "background budget" in (event.get("detail") or ""):
            budget_spent[device] += 1
sent_at = {str(send["id"]): send["at"] * 1e6 for send in sends}
spent = collections.Counter()
try:
    for line in open(f"{work}/statuses.jsonl"):
        if line.strip():
            counts = json.loads(line)["counts"]
            for name in ("sent", "held", "failed", "invalidToken", "expired"):
                spent[name] += counts.get(name, 0)
except FileNotFoundError:
    pass


def platform(device):
    return "iOS" if device % 2 == 0 else "Android"


# At once: no rule deferred it, no catch-up found it, and it reached the device within 30 s of
# the hub's send in real time (a push the hub held for an offline device took longer). Real, not
# simulated: the fan-out to thousands of devices takes seconds on a small machine, which the
# speed-up would count as hours.
at_once_micros = 30 * 1e6


def classify(pair_events):
    kinds = [event["event"] for event in pair_events]
    shown = next((event for event in pair_events if event["event"] in ("alert", "banner")), None)
    received = next((event for event in pair_events if event["event"] == "received"), None)
    late = received is None or (received.get("sinceSentMicros") or 0) > at_once_micros
    later = late or any(kind in ("deferred", "caught-up") for kind in kinds)
    if shown is not None:
        detail = shown.get("detail") or ""
        text_only = "original alert without media" in detail or "shown by the system" in detail
        return ("text" if text_only else "content", "later" if later else "at once")
    for kind in ("dropped", "coalesced", "revoked", "unattached", "failed"):
        hit = next((event for event in reversed(pair_events) if event["event"] == kind), None)
        if hit is not None:
            return ("never", f"{kind}: {(hit.get('detail') or '').split(':')[0][:60]}")
    return ("never", "never reached the app (offline or held by the hub)" if not kinds else f"stopped at {kinds[-1]}")


rows = collections.defaultdict(collections.Counter)
reasons = collections.defaultdict(collections.Counter)
by_condition = collections.defaultdict(collections.Counter)
reach = collections.Counter()  # pairs a push can reach / shown with content within the day
online = collections.Counter()  # pairs of devices online at the send / shown with content at once
for device in range(devices):
    name = platform(device)
    stopped = name == "Android" and condition.get(device) == "force-quit"
    for rich_id in ids:
        outcome, when = classify(events.get((rich_id, device), []))
        rows[name]["pairs"] += 1
        rows[name][f"{outcome} {when}" if outcome != "never" else "never"] += 1
        by_condition[condition.get(device, "?")]["pairs"] += 1
        by_condition[condition.get(device, "?")][outcome] += 1
        if outcome == "never":
            reasons[name][when] += 1
        if not stopped:
            reach["pairs"] += 1
            reach["content"] += outcome == "content"
        offline = condition.get(device) == "offline" and not (device in online_at and online_at[device] <= sent_at[rich_id])
        if not stopped and not offline:
            online["pairs"] += 1
            online["content at once"] += outcome == "content" and when == "at once"


def pct(part, whole):
    return f"{100 * part / whole:5.1f} %" if whole else "    -"


print(f"==> {strategy}: {len(ids)} notifications × {devices} devices, {time_scale:g}× simulated time")
print(f"    {'platform':8} {'pairs':>7}  {'content at once':>15} {'content later':>13} {'text only':>9} {'never':>7}")
total = collections.Counter()
for name in ("iOS", "Android"):
    row = rows[name]
    total.update(row)
    text = row["text at once"] + row["text later"]
    print(f"    {name:8} {row['pairs']:>7}  {pct(row['content at once'], row['pairs']):>15} {pct(row['content later'], row['pairs']):>13}"
          f" {pct(text, row['pairs']):>9} {pct(row['never'], row['pairs']):>7}")
    for reason, count in reasons[name].most_common(4):
        print(f"             never: {count:>6}  {reason}")
print(f"    by condition (content shown within the day / pairs):")
for name, counter in sorted(by_condition.items()):
    print(f"      {name:12} {pct(counter['content'], counter['pairs'])}  of {counter['pairs']}")
content = total["content at once"] + total["content later"]
text = total["text at once"] + total["text later"]
pushes = sum(spent.values())
# For the HTML chart of all strategies (scripts/reach/chart.py).
with open(f"{work}/summary.json", "w") as out:
    json.dump({
        "strategy": strategy,
        "platforms": {name: {"pairs": rows[name]["pairs"], "content at once": rows[name]["content at once"],
                             "content later": rows[name]["content later"],
                             "text only": rows[name]["text at once"] + rows[name]["text later"], "never": rows[name]["never"]}
                      for name in ("iOS", "Android")},
        "reach": dict(reach), "online": dict(online), "pushes": pushes, "pastBudget": sum(budget_spent.values()),
    }, out)
print(f"    all pairs: {pct(content, total['pairs'])} shown with content within the day, {pct(total['content at once'], total['pairs'])} at once")
print(f"    pushes the hub spent: {pushes} ({', '.join(f'{k} {v}' for k, v in sorted(spent.items()) if v)}); "
      f"silent pushes iOS deferred or coalesced past its background budget: {sum(budget_spent.values())}")
print(f"{strategy} {pct(reach['content'], reach['pairs']).strip()} shown with content within the day (of {reach['pairs']} pairs a push can reach), "
      f"{pct(online['content at once'], online['pairs']).strip()} at once (of {online['pairs']} pairs online at the send); "
      f"{pct(text, total['pairs']).strip()} as text only; {pushes} pushes spent, {sum(budget_spent.values())} past the budget")
