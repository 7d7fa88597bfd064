"""Hostile input to the bulk send, POST /api/notifications/batch: bodies too deep, too many items
or values, too large; per-item refusals (deep targets, other users' tags, a huge grapheme, spent
quotas) answered per item while the request itself is 200."""
import json
import time

from harness import raw_request

PATH = "/api/notifications/batch"


def item(message="m", target=None, **fields):
    body = {"message": message, "richType": "text", "payload": "p", **fields}
    if target is not None:
        body["target"] = target
    return body


def batch(ctx, user, items, port=None, timeout=10.0):
    return ctx.http("POST", PATH, {"notifications": items}, user=user, port=port, timeout=timeout)


def results(t, what, resp):
    """The per-item results of a 200 answer, or ends the case."""
    t.need(t.status(what, resp, 200))
    body = resp.json() or {}
    found = body.get("results")
    t.need(t.expect(f"{what}: results", isinstance(found, list), "a list of results", resp.brief()))
    return found


def item_is(t, what, result, status, code=None):
    got = (result.get("httpStatus"), (result.get("error") or {}).get("code"))
    ok = got[0] == status and (code is None or got[1] == code)
    return t.expect(what, ok, f"{status}{' ' + code if code else ''}", got)


def too_deep(ctx, t):
    body = ('{"notifications":[' + "[" * 5000 + "]" * 5000 + "]}").encode()
    t.status("a batch item nested 5,000 deep", ctx.http("POST", PATH, body, user="root", content_type="application/json"), 400, code="too_deep")


def too_many_items(ctx, t):
    t.status("1,001 items", batch(ctx, "root", [item() for _ in range(1001)]), 422, code="too_many_items")
    t.status("no items", batch(ctx, "root", []), 422, code="empty_batch")


def many_tiny_values(ctx, t):
    # 3 MB: one item whose unknown member holds 1.5 million values (items alone are counted apart).
    body = ('{"notifications":[{"message":"m","payload":"p","x":[' + ",".join(["0"] * 1_500_000) + "]}]}").encode()
    started = time.monotonic()
    resp = ctx.http("POST", PATH, body, user="root", content_type="application/json", timeout=15)
    t.status("an item of 1.5 million values", resp, 413, code="too_large")
    t.expect("time to answer", time.monotonic() - started < 5, "< 5 s", f"{time.monotonic() - started:.1f}s")


def huge_content_length(ctx, t):
    head = (f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n{ctx.auth_header('root')}"
            "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n").encode()
    resp = raw_request(ctx.api.port, [head], timeout=3)
    t.expect("Content-Length: 10000000000 and no body", resp.status == 413, "413", resp.brief())


def not_a_batch(ctx, t):
    t.status("`notifications` an object", ctx.http("POST", PATH, {"notifications": {"a": 1}}, user="root"), 400, code="wrong_type")
    t.status("not JSON", ctx.http("POST", PATH, b"{\"notifications\":[", user="root", content_type="application/json"), 400, code="malformed_json")
    t.status("a form", ctx.http("POST", PATH, b"a=b", user="root", content_type="application/x-www-form-urlencoded"), 415)
    t.status("an Idempotency-Key header on the batch",
             ctx.http("POST", PATH, {"notifications": [item()]}, user="root", headers={"Idempotency-Key": "k1"}), 400, code="bad_idempotency_key")


def per_item_refusals(ctx, t):
    deep = "(" * 100000 + "a" + ")" * 100000
    found = results(t, "alice's batch", batch(ctx, "alice", [item(), item(target="bob-group"), item(target=deep),
                                                              item(message="e" + "\u0301" * 600000)], timeout=15))
    t.need(t.expect("one result per item", len(found) == 4, 4, len(found)))
    item_is(t, "alice to her own tag", found[0], 202)
    item_is(t, "alice to another tag", found[1], 403)
    item_is(t, "alice to a deep expression", found[2], 403)
    item_is(t, "a 1.2 MB message that is one grapheme", found[3], 422)
    found = results(t, "root's batch", batch(ctx, "root", [item(target=deep), item(target="news"), item(idempotencyKey="x" * 300)]))
    item_is(t, "root to a deep expression", found[0], 422, code="bad_target")
    item_is(t, "root to news", found[1], 202)
    item_is(t, "an idempotency key of 300 bytes", found[2], 400, code="bad_idempotency_key")


def quota_per_item(ctx, t):
    from cases_limits import api2_up
    api2_up(ctx, t)
    ctx.add_user(t, "quota_nb")
    found = results(t, "8 items against 5 a minute", batch(ctx, "quota_nb", [item() for _ in range(8)], port=ctx.api2.port))
    statuses = [result.get("httpStatus") for result in found]
    t.expect("per item", statuses == [202] * 5 + [429] * 3, "5 x 202 then 3 x 429", statuses)
    t.expect("retryAfter of the refused", all(isinstance(result.get("retryAfter"), int) for result in found[5:]), "seconds", json.dumps(found[5:])[:200])


CASES = [
    ("batch/too-deep-400", too_deep),
    ("batch/too-many-items-422", too_many_items),
    ("batch/many-tiny-values-413", many_tiny_values),
    ("batch/content-length-10G-413", huge_content_length),
    ("batch/not-a-batch-4xx", not_a_batch),
    ("batch/per-item-refusals", per_item_refusals),
    ("batch/quota-per-item", quota_per_item, "api2"),
]
