import Foundation
import RichPushCore

extension WebPushSimulator {
    /// The answer to one push message request, before it is written.
    struct Answer: Sendable {
        var status: Int
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        var delay: Duration = .zero
    }

    /// `POST /push/<id>` (RFC 8030 §5). Checks in the order a push service meets them: the
    /// subscription (404, 410), the body's size (413), VAPID (401, 403), the headers and the
    /// `aes128gcm` header (400); then the injected faults (429, 503) and the store's room (503).
    func push(subscriptionID: String, header: (String) -> String?, body: [UInt8], tooLarge: Bool) -> Answer {
        var answer = decide(subscriptionID: subscriptionID, header: header, body: body, tooLarge: tooLarge)
        if let range = configuration.delayMilliseconds {
            answer.delay = .milliseconds(range.lowerBound + Int(random.next() * Double(range.count - 1) + 0.5))
        }
        return answer
    }

    private func decide(subscriptionID: String, header: (String) -> String?, body: [UInt8], tooLarge: Bool) -> Answer {
        var subject: String?
        // The log line, built only when there is a log: a push without one allocates nothing for it.
        func record(status: Int, reason: String?, outcome: String? = nil) {
            guard log != nil else { return }
            var entry: [String: Any?] = [
                "event": "push", "subscription": subscriptionID, "bytes": body.count, "topic": header("topic"),
                "ttl": header("ttl"), "urgency": header("urgency"), "sub": subject, "status": status, "reason": reason,
            ]
            if let outcome { entry["outcome"] = outcome }
            logLine(entry)
        }
        func refuse(_ error: WebPushSimError) -> Answer {
            record(status: error.status, reason: error.reason.name)
            return Self.answer(error)
        }
        let key: [UInt8]?
        switch store.lookup(subscriptionID) {
        case .unknown:
            return refuse(
                WebPushSimError(
                    404, errno: 102, .unknownSubscription, "No such subscription: the endpoint is not one this push service issued"))
        case .expired: return refuse(Self.expired)
        case .active(let applicationServerKey): key = applicationServerKey
        }
        if configuration.gone > 0, SimulationRandom.stableUnit(of: subscriptionID, seed: configuration.seed) < configuration.gone {
            _ = store.expire(subscriptionID)
            return refuse(Self.expired)
        }
        if tooLarge {
            return refuse(
                WebPushSimError(
                    413, errno: 104, .tooLarge,
                    "The body is larger than \(PushRequestRules.maxBodyBytes) bytes (RFC 8030 §7.2; RFC 8291 §4: one 4,096-byte record)"))
        }
        let identity: VAPIDCheck.Identity
        switch VAPIDCheck.check(
            authorization: header("authorization"), origin: origin, applicationServerKey: key, now: configuration.now(),
            verified: verifiedTokens)
        {
        case .failure(let error): return refuse(error)
        case .success(let verified): identity = verified
        }
        subject = identity.subject
        let checked: PushRequestRules.Checked
        switch PushRequestRules.check(header: header, body: body, maxTTL: configuration.maxTTL) {
        case .failure(let error): return refuse(error)
        case .success(let value): checked = value
        }
        let now = configuration.now().timeIntervalSince1970
        if let limited = rateLimit.check(subscriptionID, now: now) {
            let error = WebPushSimError(
                429, errno: 202, limited.insideWindow ? .insideRetryAfter : .subscriptionRate,
                limited.insideWindow
                    ? "Too many requests: this subscription was told to wait (Retry-After) and the time is not up (RFC 8030 §8.4)"
                    : "Too many requests for this subscription: retry after the Retry-After seconds",
                retryAfter: limited.retryAfter)
            record(status: 429, reason: error.reason.name, outcome: limited.insideWindow ? "inside_retry_after" : nil)
            return Self.answer(error)
        }
        var threshold = 0.0
        let draw = random.next()
        for (status, share) in configuration.transient {
            threshold += share
            guard draw < threshold else { continue }
            if status == 429 { rateLimit.refused(subscriptionID, retryAfter: 1, now: now) }
            return refuse(
                WebPushSimError(
                    status, errno: 201, .injected,
                    status == 429
                        ? "Too many requests: retry after the Retry-After seconds"
                        : "The push service is unavailable: retry after the Retry-After seconds",
                    retryAfter: 1))
        }
        let message = PushMessage(
            id: SubscriptionStore.randomID(), subscriptionId: subscriptionID, body: Data(body),
            contentEncoding: checked.contentEncoding, ttl: checked.ttl, urgency: checked.urgency, topic: checked.topic, receivedAt: now)
        switch store.offer(message, now: now) {
        case .gone(.unknown), .gone(.active):
            return refuse(WebPushSimError(404, errno: 102, .unknownSubscription, "No such subscription"))
        case .gone(.expired):
            return refuse(Self.expired)
        case .full:
            return refuse(
                WebPushSimError(
                    503, errno: 201, .storageFull, "The push service holds as many messages as it can for offline subscribers",
                    retryAfter: 5))
        case .dropped:
            record(status: 201, reason: nil, outcome: "dropped_ttl0")
        case .queued(let replaced, let droppedOldest):
            record(status: 201, reason: nil, outcome: replaced ? "replaced" : droppedOldest ? "queued_dropped_oldest" : "queued")
        }
        // RFC 8030 §5: 201 Created, the push message resource in Location; §5.2: the TTL kept.
        return Answer(
            status: 201, headers: [(name: "location", value: "\(origin)/message/\(message.id)"), (name: "ttl", value: String(checked.ttl))])
    }

    static let expired = WebPushSimError(
        410, errno: 103, .expiredSubscription, "The subscription has expired: stop sending to it (RFC 8030 §7.3)")
}
