import RichPushCore
import RichPushHTTP2
import Synchronization

/// What the push services told this process about single subscriptions and about themselves,
/// shared by every batch of a ``WebPushPushAdapter`` and consulted as each request is written:
/// subscriptions answered 404 or 410 (gone: nothing more is sent to them), subscriptions answered
/// 429 (RFC 8030 §8.4: `Retry-After` is how long to wait "before it makes another request to the
/// push resource"), and a push service that answered 503 with `Retry-After` (the whole service).
final class WebPushServiceMemory: Sendable {
    let gone = HTTP2GoneRecipients()
    private let byOrigin = Mutex<[String: HTTP2Backoffs]>([:])

    /// The back-offs of one push service (its origin), made at its first use.
    func backoffs(for origin: String) -> HTTP2Backoffs {
        byOrigin.withLock { services in
            if let known = services[origin] { return known }
            let made = HTTP2Backoffs()
            services[origin] = made
            return made
        }
    }

    /// What an answer asks of later requests: a subscription gone, or one held for its wait.
    func learn(from answer: WebPushServiceAnswer, endpoint: String, origin: String) {
        switch answer.status {
        case 404, 410: gone.insert(endpoint)
        case 429: backoffs(for: origin).hold(endpoint, for: answer.wait ?? WebPushServiceAnswer.defaultBackOff)
        case 503: if let wait = answer.wait { backoffs(for: origin).holdProvider(for: wait) }
        default: break
        }
    }

    /// Why a request to `endpoint` must not be written now, as the push's outcome; nil: send it.
    func stop(_ endpoint: String, origin: String) -> WebPushStop? {
        if gone.contains(endpoint) { return .gone }
        let backoffs = backoffs(for: origin)
        if let wait = backoffs.remaining(for: endpoint) { return .subscriptionHeld(wait) }
        if let wait = backoffs.providerRemaining { return .serviceHeld(wait) }
        return nil
    }
}

/// Why a Web Push request was not written (``WebPushServiceMemory/stop(_:origin:)``).
enum WebPushStop: Sendable, Hashable {
    case gone
    case subscriptionHeld(Duration)
    case serviceHeld(Duration)

    /// The push's outcome: deferred, never failed (the fleet's record of the gone subscription
    /// decides at the job's return, judged against the registration's time).
    var outcome: PushOutcome {
        switch self {
        case .gone:
            .deferred(reason: "not sent: the push service answered that this subscription is gone moments ago", after: .seconds(1))
        case .subscriptionHeld(let wait):
            .deviceDeferred(
                reason: "not sent: the push service asked to slow down for this subscription (429); again in \(wait)", after: wait)
        case .serviceHeld(let wait):
            .deferred(reason: "not sent: the push service asked to wait (503 with Retry-After); again in \(wait)", after: wait)
        }
    }
}
