import Synchronization

/// The VAPID signatures this service has verified (by `k` and the JWT), so a sender's cached token
/// costs one ECDSA verification per token, not per push, as a real push service's cache makes it.
/// Only the signature is remembered: `aud`, `exp` and `sub` are checked on every push. Bounded:
/// past `limit` tokens it starts again.
final class VerifiedSignatures: Sendable {
    private let tokens = Mutex<Set<String>>([])
    let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    func contains(_ key: String) -> Bool { tokens.withLock { $0.contains(key) } }

    func insert(_ key: String) {
        tokens.withLock { tokens in
            if tokens.count >= limit { tokens.removeAll(keepingCapacity: true) }
            tokens.insert(key)
        }
    }
}
