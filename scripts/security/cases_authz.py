"""Who may do what: push-token hijack, what a tag lets a user read, removed and re-added users,
API keys and their scopes, receipts counted once, and the authorization matrix of openapi.yaml."""
import os
import re
import threading
import time

import openapi
from harness import Failed

MATRIX_HANDLE = "matrix-handle-never-saved"
OPENAPI = os.path.join(os.path.dirname(__file__), "..", "..", "openapi.yaml")


def device_ids(status_body):
    return {device.get("installation") for device in (status_body or {}).get("devices", []) if isinstance(device, dict)}


def handle_hijack(ctx, t):
    handle = ctx.token("hijack-handle")
    alice_id, put = ctx.register(t, "alice", handle=handle)
    t.need(t.status("alice PUTs her registration of handle H", put, 200))
    created = ctx.http("POST", f"/api/register?handle={handle}", user="bob")
    t.need(t.status("bob POSTs /api/register?handle=H", created, 200))
    bob_id = created.json()
    t.expect("bob's registration id for H", bob_id != alice_id, "a new id, not alice's", bob_id)
    put = ctx.http("PUT", f"/api/register/{bob_id}", {"Platform": "apns", "Handle": handle, "Tags": []}, user="bob")
    t.status("bob PUTs his registration with alice's handle", put, 409, code="handle_taken")


def tag_read_capability(ctx, t):
    alice_id, put = ctx.register(t, "alice", tags=["sports"])
    t.need(t.status("alice registers a device tagged sports", put, 200))
    root_id, put = ctx.register(t, "root", tags=["sports"])
    t.need(t.status("root registers a device tagged sports", put, 200))
    nid = ctx.sent_id(t, "root sends to 'sports'", ctx.send("root", target="sports"))
    ctx.wait_delivered(t, "root", nid)
    bob_id, put = ctx.register(t, "bob")
    t.need(t.status("bob registers a device", put, 200))
    put = ctx.http("PUT", f"/api/register/{bob_id}", {"Platform": "apns", "Handle": ctx.secret(ctx.token("h"), "handle of bob"), "Tags": ["sports"]}, user="bob")
    t.status("bob adds the tag sports to his device afterwards", put, 200)
    t.status(f"bob GET /api/notifications/{nid}", ctx.http("GET", f"/api/notifications/{nid}", user="bob"), 404)
    t.status(f"alice GET /api/notifications/{nid}", ctx.http("GET", f"/api/notifications/{nid}", user="alice"), 200)
    t.status(f"bob GET /api/notifications/{nid}/status", ctx.http("GET", f"/api/notifications/{nid}/status", user="bob"), 404)
    t.status(f"bob POST /api/notifications/{nid}/receipts", ctx.http("POST", f"/api/notifications/{nid}/receipts", {"kind": "opened"}, user="bob"), 404)
    alice_status = ctx.http("GET", f"/api/notifications/{nid}/status", user="alice")
    if t.status(f"alice GET /api/notifications/{nid}/status", alice_status, 200):
        seen = device_ids(alice_status.json())
        others = seen - set(ctx.registrations.get("alice", []))
        t.expect("devices in alice's status", not others and alice_id in seen, f"only alice's ({alice_id})", sorted(seen))
    root_status = ctx.http("GET", f"/api/notifications/{nid}/status", user="root")
    if t.status(f"root GET /api/notifications/{nid}/status", root_status, 200):
        seen = device_ids(root_status.json())
        t.expect("devices in root's status", {alice_id, root_id} <= seen, f"alice's {alice_id} and root's {root_id}", sorted(seen))


def removed_user(ctx, t):
    old_password = ctx.add_user(t, "alice2")
    old_reg, put = ctx.register(t, "alice2", tags=["alice2-old"])
    t.need(t.status("alice2 registers a device", put, 200))
    old_nid = ctx.sent_id(t, "alice2 sends", ctx.send("alice2"))
    ctx.wait_delivered(t, "alice2", old_nid)
    result = ctx.cli("users", "remove", "alice2")
    t.need(t.expect("`users remove alice2`", result.returncode == 0, "exit 0", f"exit {result.returncode}: {result.stderr.strip()[-300:]}"))
    new_password = ctx.add_user(t, "alice2")
    t.status("the removed alice2's old password", ctx.http("GET", "/api/notifications", user="alice2", password=old_password), 401)
    listing = ctx.http("GET", "/api/notifications", user="alice2", password=new_password)
    if t.status("new alice2 GET /api/notifications", listing, 200):
        t.expect("new alice2's list", (listing.json() or {}).get("notifications") == [], "[]", listing.brief())
    t.status(f"new alice2 GET the old /api/notifications/{old_nid}", ctx.http("GET", f"/api/notifications/{old_nid}", user="alice2"), 404)
    t.status(f"new alice2 GET the old /api/notifications/{old_nid}/status", ctx.http("GET", f"/api/notifications/{old_nid}/status", user="alice2"), 404)
    new_reg, put = ctx.register(t, "alice2")
    t.need(t.status("new alice2 registers a device", put, 200))
    nid = ctx.sent_id(t, "new alice2 sends", ctx.send("alice2"))
    view = ctx.wait_delivered(t, "alice2", nid)
    seen = device_ids(view)
    t.expect(f"devices of new alice2's notification {nid}", old_reg not in seen and new_reg in seen,
             f"{new_reg} and not the removed user's {old_reg}", sorted(seen))
    put = ctx.http("PUT", f"/api/register/{old_reg}", {"Platform": "apns", "Handle": ctx.secret(ctx.token("h"), "handle"), "Tags": []}, user="alice2")
    if t.status("new alice2 PUTs the removed user's registration id", put, (200, 404)) and put.status == 200:
        tags = (put.json() or {}).get("Tags")
        t.expect("its tags", tags == ["username:alice2"], "a fresh registration ['username:alice2']", tags)


def receipts_counted_once(ctx, t):
    nid = ctx.sent_id(t, "alice sends", ctx.send("alice"))
    results = []

    def post():
        results.append(ctx.http("POST", f"/api/notifications/{nid}/receipts", {"kind": "opened"}, user="alice").status)

    threads = [threading.Thread(target=post) for _ in range(25)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    t.expect("25 receipts 'opened' by alice", all(status in (200, 409) for status in results) and len(results) == 25,
             "25 answers 200 (or 409)", sorted(results))
    status = ctx.http("GET", f"/api/notifications/{nid}/status", user="alice")
    if t.status("status", status, 200):
        opened = ((status.json() or {}).get("counts") or {}).get("opened")
        t.expect("counts.opened", opened == 1, 1, opened)


def api_keys(ctx, t):
    created = ctx.cli("keys", "create", "alice", "--scope", "send")
    output = created.stdout + created.stderr
    t.need(t.expect("`keys create alice --scope send`", created.returncode == 0, "exit 0", f"exit {created.returncode}: {output.strip()[-300:]}"))
    keys = [line.strip() for line in created.stdout.splitlines() if line.strip().startswith("rpk_")]
    t.need(t.expect("its output", bool(keys), "a line starting rpk_", created.stdout.strip()[-300:]))
    key = ctx.secret(keys[0].split()[0], "API key")
    key_id = find_key_id(ctx, created.stdout, key)
    t.status("Bearer key (send) POST /api/notifications", ctx.send(None, bearer=key), 202)
    t.status("Bearer key (send) GET /api/notifications", ctx.http("GET", "/api/notifications", bearer=key), 403, code="insufficient_scope")
    t.need(t.expect("the key's id (from `keys create` or `keys list`)", key_id is not None, "an id", created.stdout.strip()[-300:]))
    revoked = ctx.cli("keys", "revoke", key_id)
    t.need(t.expect(f"`keys revoke {key_id}`", revoked.returncode == 0, "exit 0", f"exit {revoked.returncode}: {(revoked.stdout + revoked.stderr).strip()[-300:]}"))
    started = time.monotonic()
    resp = None
    while time.monotonic() - started < 2.0:
        resp = ctx.send(None, bearer=key)
        if resp.status == 401:
            break
        time.sleep(0.2)
    t.status("the revoked key, within 2 s", resp, 401)


def find_key_id(ctx, create_output, key):
    """The id `keys create` printed (`id: X`, `id=X`, `id X`), else the row of `keys list` for alice."""
    for line in create_output.splitlines():
        match = re.search(r"\bid\b\s*[:=]?\s*([A-Za-z0-9_.-]+)", line, re.I)
        if match and not line.strip().startswith("rpk_"):
            return match.group(1)
    listing = ctx.cli("keys", "list")
    rows = [line.split() for line in listing.stdout.splitlines() if "alice" in line.split() and "send" in line]
    if rows:
        return rows[-1][0]
    parts = key.split("_")  # rpk_<id>_<secret>
    return parts[1] if len(parts) >= 3 else None


def matrix_needs_credentials(ctx, t):
    ids = matrix_ids(ctx, t)
    ctx.secret(MATRIX_HANDLE, "device handle sent in the matrix")
    ops = [op for op in openapi.operations(OPENAPI) if op[2]]
    t.need(t.expect("operations in openapi.yaml needing credentials", len(ops) >= 7, ">= 7", ops))
    for method, path, _ in ops:
        concrete = concrete_path(path, ids)
        resp = ctx.http(method, concrete, body_for(method, path))
        t.status(f"{method} {concrete} without credentials", resp, 401)


def matrix_other_users_ids(ctx, t):
    ids = matrix_ids(ctx, t)
    operator = openapi.operator_operations(OPENAPI)
    for method, path, needs_auth in openapi.operations(OPENAPI):
        if not needs_auth or "{id}" not in path or (method, path) in operator:
            continue
        concrete = concrete_path(path, ids)
        t.status(f"bob {method} {concrete} (alice's)", ctx.http(method, concrete, body_for(method, path), user="bob"), 404)
    nid = ids["notification"]
    t.status(f"alice GET /api/notifications/{nid} after bob's attempts", ctx.http("GET", f"/api/notifications/{nid}", user="alice"), 200)


def matrix_operator_routes_refuse_users(ctx, t):
    """The operator's routes (/api/apps) take the operator's token, never a user's password."""
    ops = openapi.operator_operations(OPENAPI)
    t.need(t.expect("operator operations in openapi.yaml", len(ops) >= 5, ">= 5", sorted(ops)))
    for method, path in sorted(ops):
        concrete = path.replace("{id}", "default")
        for user in ("alice", "root"):
            t.status(f"{user} {method} {concrete}", ctx.http(method, concrete, {"name": "x"} if method in ("POST", "PATCH") else None, user=user), 401)


def matrix_other_apps(ctx, t):
    """Two apps on one deployment, each with its alice and root: every operation with an id in
    openapi.yaml, as either app's users on the other's registration and notification, finds
    nothing (404), and no list shows the other app's."""
    ids = matrix_ids(ctx, t)
    # The run's key-encryption key when scripts/security.sh made one (the NH listener's apps are
    # sealed with it, and the API reads every app with it), else one of this case's own.
    kek = os.environ.get("RICHPUSH_KEK_FILE") or os.path.join(ctx.run_dir, "kek")
    if not os.path.exists(kek):
        made = ctx.cli("apps", "new-kek")
        t.need(t.expect("`apps new-kek`", made.returncode == 0, "exit 0", made.stderr.strip()[-300:]))
        with open(kek, "w") as file:
            file.write(made.stdout)
    created = ctx.cli("apps", "create", "other", "--kek-file", kek)
    t.need(t.expect("`apps create other`", created.returncode == 0, "exit 0", created.stderr.strip()[-300:]))
    ctx.add_user(t, "alice", app="other")
    ctx.add_user(t, "root", role="admin", app="other")
    reg_id, put = ctx.register(t, "alice@other", tags=["matrix"])
    t.need(t.status("alice@other registers a device", put, 200))
    other = {"registration": reg_id, "notification": ctx.sent_id(t, "alice@other sends", ctx.send("alice@other"))}
    operator = openapi.operator_operations(OPENAPI)
    checked = 0
    for method, path, needs_auth in openapi.operations(OPENAPI):
        # PUT /api/register/{id} creates the caller's own registration of that id when their app
        # has none (the seed's upsert): checked apart, below.
        if not needs_auth or "{id}" not in path or (method, path) in operator or (method, path) == ("PUT", "/api/register/{id}"):
            continue
        for callers, owned in ((("alice@other", "root@other"), ids), (("alice", "root"), other)):
            concrete = concrete_path(path, owned)
            for caller in callers:
                resp = ctx.http(method, concrete, body_for(method, path), user=caller)
                t.status(f"{caller} {method} {concrete} (the other app's)", resp, 404)
                checked += 1
    t.need(t.expect("id operations checked across apps", checked >= 16, ">= 16", checked))
    # The same registration id in the other app is another registration: the owner's stays theirs.
    body = {"Platform": "apns", "Handle": MATRIX_HANDLE, "Tags": []}
    for caller, owner, owned in (("alice@other", "alice", ids), ("alice", "alice@other", other)):
        reg = owned["registration"]
        t.status(f"{caller} PUT /api/register/{reg} (an id the other app has): its own", ctx.http("PUT", f"/api/register/{reg}", body, user=caller), 200)
        t.status(f"{owner} PUT /api/register/{reg} after it: still theirs", ctx.http("PUT", f"/api/register/{reg}", body, user=owner), 200)
        t.status(f"{caller} DELETE /api/register/{reg}: its own copy", ctx.http("DELETE", f"/api/register/{reg}", user=caller), 200)
        t.status(f"{owner} PUT /api/register/{reg} after that: still there", ctx.http("PUT", f"/api/register/{reg}", body, user=owner), 200)
    # The other app's API keys, one per right (Notification Hubs' Listen, Send, Manage, and admin):
    # none reads or changes the default app's (404, or 403 where the right does not cover the route).
    for scope, user in (("listen", "alice"), ("send", "alice"), ("read", "alice"), ("admin", "root"), ("manage", "root")):
        made = ctx.cli("keys", "create", user, "--app", "other", "--scope", scope)
        tokens = [line.strip().split()[0] for line in made.stdout.splitlines() if line.strip().startswith("rpk_other.")]
        if not t.expect(f"`keys create {user} --app other --scope {scope}`", made.returncode == 0 and bool(tokens), "an rpk_other.… token",
                        (made.stdout + made.stderr).strip()[-300:]):
            continue
        token = ctx.secret(tokens[0], f"API key of other ({scope})")
        for method, path, needs_auth in openapi.operations(OPENAPI):
            if not needs_auth or "{id}" not in path or (method, path) in operator or (method, path) == ("PUT", "/api/register/{id}"):
                continue
            concrete = concrete_path(path, ids)
            allowed = (403, 404)
            resp = ctx.http(method, concrete, body_for(method, path), bearer=token)
            t.expect(f"other's {scope} key {method} {concrete}", resp.status in allowed, " or ".join(map(str, allowed)), resp.brief())
        if scope == "manage":
            # A manage key manages its own app only: the default app is not there for it.
            t.status("other's manage key GET /api/apps/default", ctx.http("GET", "/api/apps/default", bearer=token), 404)
            t.status("other's manage key GET /api/apps/other", ctx.http("GET", "/api/apps/other", bearer=token), 200)
    for caller, foreign in (("root@other", ids["notification"]), ("root", other["notification"])):
        listed = ctx.http("GET", "/api/notifications", user=caller)
        t.status(f"{caller} lists notifications", listed, 200)
        shown = [item.get("id") for item in (listed.json() or {}).get("notifications", [])]
        t.expect(f"{caller}'s list leaves out the other app's {foreign}", foreign not in shown, "absent", shown[:10])
    for owner, nid in (("alice", ids["notification"]), ("alice@other", other["notification"])):
        t.status(f"{owner} GET /api/notifications/{nid} after the other app's attempts", ctx.http("GET", f"/api/notifications/{nid}", user=owner), 200)


def matrix_ids(ctx, t):
    """A registration and a notification of alice's, made once."""
    if not hasattr(ctx, "matrix"):
        reg_id, put = ctx.register(t, "alice", tags=["matrix"])
        t.need(t.status("alice registers a device", put, 200))
        nid = ctx.sent_id(t, "alice sends", ctx.send("alice"))
        ctx.matrix = {"registration": reg_id, "notification": nid}
    return ctx.matrix


def concrete_path(path, ids):
    return path.replace("{id}", ids["registration"] if path.startswith("/api/register/") else ids["notification"])


def body_for(method, path):
    if path.startswith("/api/register/") and method == "PUT":
        return {"Platform": "apns", "Handle": MATRIX_HANDLE, "Tags": []}
    if path.endswith("/receipts"):
        return {"kind": "opened"}
    if path == "/api/notifications" and method == "POST":
        return {"message": "m", "richType": "text", "payload": "p"}
    return None


CASES = [
    ("authz/handle-hijack-409", handle_hijack),
    ("authz/tag-read-capability", tag_read_capability),
    ("authz/removed-user", removed_user),
    ("authz/receipts-counted-once", receipts_counted_once),
    ("authz/api-keys", api_keys),
    ("authz/matrix-no-credentials-401", matrix_needs_credentials),
    ("authz/matrix-other-users-ids-404", matrix_other_users_ids),
    ("authz/matrix-operator-routes-refuse-users", matrix_operator_routes_refuse_users),
    ("authz/matrix-other-apps-404", matrix_other_apps),
]
