import Synchronization

/// The VAPID tokens this service has verified, by the `Authorization` header that carried the JWT
/// and `k`, with what they claim: a sender's cached token costs one parse and one ECDSA
/// verification per token, not per push, as a real push service's cache makes it. `aud`, `exp`,
/// `sub` and the subscription's key are checked on every push
/// (``VAPIDCheck/check(_:origin:applicationServerKey:now:)``). Bounded: past `limit` tokens it
/// starts again.
final class VerifiedTokens: Sendable {
    private let tokens = Mutex<[String: VAPIDCheck.Token]>([:])
    let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    func token(_ key: String) -> VAPIDCheck.Token? { tokens.withLock { $0[key] } }

    func insert(_ key: String, _ token: VAPIDCheck.Token) {
        tokens.withLock { tokens in
            if tokens.count >= limit { tokens.removeAll(keepingCapacity: true) }
            tokens[key] = token
        }
    }
}
