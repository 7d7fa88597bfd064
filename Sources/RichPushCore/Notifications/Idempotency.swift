/// A client's `Idempotency-Key` on `POST /api/notifications`, scoped to the user: a repeat with the
/// same key and the same request replays the first answer and creates nothing (Stripe's and
/// Novu's contract), for `lifetime`.
package struct IdempotencyKey: Sendable, Hashable {
    package let user: String
    package let key: String
    /// Of the request the key was first used with (its media type and body): the same key with
    /// another request is refused, not replayed.
    package let fingerprint: String

    package static let maxLength = 255
    /// How long a key is remembered after its notification was created.
    package static let lifetime: Duration = .seconds(86400)
    /// How long a key stays claimed while its first request is being handled: a process that dies
    /// mid-request frees it after this, not after a day.
    package static let claimLifetime: Duration = .seconds(60)
    /// How long a repeat should wait while the first request is still being handled
    /// (`Retry-After` of a 409): it finishes within milliseconds; the claim's lifetime only
    /// guards against a process that died mid-request.
    package static let inFlightRetryAfter: Duration = .seconds(1)

    package init(user: String, key: String, fingerprint: String) {
        self.user = user
        self.key = key
        self.fingerprint = fingerprint
    }

    /// Why `key` cannot be an idempotency key (1 to 255 printable ASCII characters), or nil.
    package static func problem(with key: String) -> String? {
        guard (1...maxLength).contains(key.utf8.count), key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return "an Idempotency-Key is 1 to \(maxLength) printable ASCII characters"
        }
        return nil
    }
}

/// What claiming an idempotency key found.
package enum IdempotencyClaim: Sendable, Hashable {
    /// The key was free: this request goes ahead, and its notification completes the key.
    case claimed
    /// The first request with this key is still being handled: try again in `retryAfter`.
    case inFlight(retryAfter: Duration)
    /// The key was used with another request.
    case mismatch
    /// The key's notification exists: replay its answer.
    case completed(notification: Int)
}
