"""Every 202-acknowledged notification against what each device received and showed.

A pair (notification, device) the device never received is classified from what Redis recorded
for it: `held` by the hub while the device was offline and replaced by a newer held push (or
`expired` at once by it: APNs keeps an offline iPhone one push) is coalesced while offline; `sent` to a device whose simulator was killed -9 right
after is in flight at the kill (the device process died with it in its socket); anything else
is lost. A pair received once but never shown (its payload fetch failed, or its resend was
collapsed before it was shown) is lost too, unless its simulator was killed -9 right after. Dead
letters are listed with their reasons.
"""
import collections
import json
import os
import time


def read_events(path):
    events = []
    if not os.path.exists(path):
        return events
    with open(path, errors="replace") as lines:
        for line in lines:
            line = line.strip()
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    pass  # a line cut by kill -9
    return events


def reconcile(cluster, sends, faults, settle=5.0):
    sim_events = [read_events(sim.stdout_path) for sim in cluster.sims]
    groups = cluster.groups
    installation = {}  # (sim, device) -> installation id
    received = collections.Counter()
    collapsed = collections.Counter()
    shown = collections.Counter()
    fetched = set()
    first_seen = {}
    fetch_failures = collections.Counter()
    by_message = collections.defaultdict(set)  # "chaos k" -> notification ids delivered
    for sim, events in enumerate(sim_events):
        for event in events:
            device = (sim, event.get("device"))
            if event.get("event") == "registered":
                installation[device] = event.get("installation")
                continue
            rich_id = event.get("richId")
            if rich_id is None or not rich_id.isdigit():
                continue
            pair = (int(rich_id), device)
            kind = event.get("event")
            if kind == "received":
                received[pair] += 1
                first_seen.setdefault(pair, event.get("at", 0) / 1e6)
                if event.get("message"):
                    by_message[event["message"]].add(int(rich_id))
            elif kind == "collapsed":
                collapsed[pair] += 1
            elif kind == "fetched":
                fetched.add(pair)
            elif kind in ("alert", "banner"):
                shown[pair] += 1
            elif kind == "failed":
                fetch_failures[event.get("detail", "?").split(":")[0]] += 1

    acked = [send for send in sends if send.id is not None]
    acked_ids = {send.id for send in acked}
    devices = sorted(installation)
    expected = [(send, device) for send in acked for device in devices if device[1] % groups == send.group]
    stats = collections.Counter()
    lost = []
    for send, device in expected:
        count = received[(send.id, device)]
        if count == 1 and shown[(send.id, device)] == 0:
            reason = classify_unshown(cluster, device, first_seen[(send.id, device)], (send.id, device) in fetched)
            stats[reason] += 1
            if reason.startswith("lost"):
                lost.append({"notification": send.id, "seq": send.seq, "sim": device[0], "device": device[1], "why": reason})
        elif count == 1:
            stats["delivered once"] += 1
        elif count > 1:
            stats["duplicated"] += 1
        else:
            reason = classify_missing(cluster, send, device, installation[device])
            stats[reason] += 1
            if reason.startswith("lost"):
                lost.append({"notification": send.id, "seq": send.seq, "sim": device[0], "device": device[1], "why": reason})
    stats["collapsed resends (same collapse id, shown once)"] = sum(collapsed.values())

    # Creates the client could not be sure of: delivered notifications it never got a 202 for.
    repeats = 0
    unacked_delivered = 0
    for send in sends:
        ids = by_message.get(send.message, set())
        extra = ids - {send.id}
        if send.id is None and ids:
            unacked_delivered += 1
        repeats += len(extra) - (1 if send.id is None and ids else 0)
    dead = cluster.dead_letters()
    dead_reasons = collections.Counter(letter.get("error", letter.get("reason", "?"))[:80] for letter in dead)

    # API answers other than 202, during a fault (from its start to `settle` s after its end) or
    # outside. A keep-alive connection opened before a fault and found dead on its next use
    # belongs to that fault, however late the client used it again.
    windows = [(fault.start, (fault.end or fault.start) + settle) for fault in faults]
    errors = {"during faults": collections.Counter(), "outside faults": collections.Counter()}
    details = collections.Counter()
    outside = []
    for send in sends:
        for attempt in send.attempts:
            if attempt.status == 202:
                continue
            label = str(attempt.status) if attempt.status else attempt.error
            during = any(start <= attempt.at <= end for start, end in windows)
            if not during and attempt.error:
                during = any(attempt.connection_born <= start <= attempt.at for start, _ in windows)
            errors["during faults" if during else "outside faults"][label] += 1
            if not during:
                since = [attempt.at - (fault.end or fault.start) for fault in faults if (fault.end or fault.start) <= attempt.at]
                outside.append({"label": label, "detail": attempt.detail, "replica": attempt.replica,
                                "seconds after the last fault ended": round(min(since), 2) if since else None})
            if attempt.detail:
                details[f"{label} {attempt.detail}"] += 1

    # Recovery: from the fault's start to the first push of a notification first sent after it.
    for fault in faults:
        candidates = [first_seen[(send.id, device)] for send in acked if send.attempts and send.attempts[0].at >= fault.start
                      for device in devices if (send.id, device) in first_seen]
        fault.recovered_at = min(candidates) if candidates else None

    return {
        "wanted": len(sends),
        "acknowledged": len(acked),
        "not acknowledged (gave up)": len(sends) - len(acked),
        "ambiguous creates (request sent, no answer)": sum(1 for send in sends if send.ambiguous),
        "pairs expected": len(expected),
        "pairs": dict(stats),
        "client-side repeats delivered (despite the Idempotency-Key)": repeats,
        "unacknowledged creates delivered": unacked_delivered,
        "delivered ids never acknowledged": len({i for ids in by_message.values() for i in ids} - acked_ids),
        "dead letters": len(dead),
        "dead letter reasons": dict(dead_reasons),
        "fetch failures": dict(fetch_failures),
        "api errors": {key: dict(value) for key, value in errors.items()},
        "api error messages": dict(details.most_common(10)),
        "api errors outside faults": outside[:50],
        "faults": [fault.as_dict() for fault in faults],
        "lost": lost[:50],
    }


def classify_unshown(cluster, device, received_at, fetched):
    """A pair received once and never shown: its simulator killed -9 within seconds of receiving
    it, or later while the device still fetched the payload (through the run's Redis and API
    faults a fetch retries for longer than 10 s: 10 pairs of a run beside stress-ng, received
    9.9-10.0 s before the kill, no fetch logged); else lost. A device that is not killed and
    never shows a push is still lost, however long its fetch."""
    for offline_from, _ in cluster.sim_offline[device[0]]:
        if received_at - 1 <= offline_from <= received_at + 10:
            return "received, its simulator killed -9 before it was shown"
        if not fetched and offline_from >= received_at - 1:
            return "received, its simulator killed -9 while it still fetched the payload"
    return "lost: received, never shown"


def device_entry(cluster, notification, installation_id):
    """The device's entry in the status: in its ledger value (`R{…}`, `T{…}`, `F{…}`) once an
    outcome was recorded, else in the devices hash (values written before the entries moved into
    the ledger, receipts that came first); None when neither has one."""
    try:
        value = cluster.redis_cli("HGET", cluster.records_key("ledger", notification), installation_id)
        if isinstance(value, bytes):
            value = value.decode()
        if value and len(value) > 1 and value[1] == "{":
            return json.loads(value[1:])
        raw = cluster.redis_cli("HGET", cluster.records_key("devices", notification), installation_id)
        return json.loads(raw) if raw else None
    except (OSError, ValueError):
        return None


def is_iphone(cluster, device):
    """Whether simulator device `device` is an iPhone: the platforms cycle as cluster.py starts them."""
    _, index = device
    if cluster.nodes:
        return True
    return index % (3 if cluster.apns else 2) == 0


def sent_while_offline(cluster, sim, entry):
    """Whether the push was recorded sent while simulator `sim` was down (its entry's `at`, ms)."""
    try:
        at = int(entry.get("at")) / 1000
    except (TypeError, ValueError):
        return False
    return any(offline_from - 1 <= at <= (back or time.time()) + 1 for offline_from, back in cluster.sim_offline[sim])


def classify_missing(cluster, send, device, installation_id):
    entry = device_entry(cluster, send.id, installation_id)
    state = entry.get("state") if entry else None
    if state == "held":
        return "coalesced while offline (held, replaced by a newer push)"
    sim, _ = device
    if state == "expired" and any(send.acked_at is not None and (back or time.time()) >= send.acked_at - 1
                                  for _, back in cluster.sim_offline[sim]):
        # Only a held push expires, and the hub holds only while the device is offline: with the
        # chaos run's ttl (a day) an expired push was replaced by a newer one while its simulator
        # was down after the send (APNs keeps an offline iPhone one push).
        return "coalesced while offline (APNs keeps one push: replaced by a newer one)"
    if state == "sent":
        for offline_from, _ in cluster.sim_offline[sim]:
            # Pushed to the simulator that was killed soon after: gone with the process.
            if send.acked_at is not None and send.acked_at - 1 <= offline_from <= send.acked_at + 10:
                return "in flight when its simulator was killed -9"
        if is_iphone(cluster, device) and sent_while_offline(cluster, sim, entry):
            # Passed on by apns-sim to the hub while the device was down: the hub kept it as APNs
            # does, one push per device, until a newer one replaced it (its expiry names no
            # notification of the ledger, so the state stays `sent`).
            return "coalesced while offline (APNs keeps one push: replaced by a newer one)"
        return "lost while online (sent, never received)"
    return f"lost: recorded as {state or 'nothing'}"
