import Crypto
import Foundation
import RichPushCore
import Synchronization

/// Remembers recently verified credentials as SHA-256 digests, so that the bcrypt check (tens of
/// milliseconds by design) runs once per user per TTL instead of on every request. A changed or
/// removed password takes effect within the TTL on every replica.
final class CredentialCache: Sendable {
    private struct Entry {
        let digest: [UInt8]
        let user: User
        let expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let ttl: Duration

    init(ttl: Duration) {
        self.ttl = ttl
    }

    func user(name: String, password: String) -> User? {
        let digest = Self.digest(name: name, password: password)
        return entries.withLock { entries in
            guard let entry = entries[name] else { return nil }
            guard entry.expires > .now else {
                entries[name] = nil
                return nil
            }
            return Self.constantTimeEqual(entry.digest, digest) ? entry.user : nil
        }
    }

    func remember(_ user: User, password: String) {
        let entry = Entry(digest: Self.digest(name: user.name, password: password), user: user, expires: .now + ttl)
        entries.withLock { entries in
            if entries.count > 100_000 { entries.removeAll() }
            entries[user.name] = entry
        }
    }

    private static func digest(name: String, password: String) -> [UInt8] {
        Array(SHA256.hash(data: Data((name + "\u{0}" + password).utf8)))
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
