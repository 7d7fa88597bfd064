import Crypto
import Foundation
import RichPushCore
import Synchronization

/// Remembers recently verified credentials as SHA-256 digests of the secret, with what they
/// proved and when: the auth middleware trusts an entry for a while, then revalidates it against
/// Redis (cheap: the stored bcrypt hash unchanged means the password still matches) instead of
/// running bcrypt again, so entries never expire for everyone at once. Changes announced on the
/// credential channel drop entries at once on every replica.
final class CredentialCache<Value: Sendable>: Sendable {
    struct Entry {
        let digest: [UInt8]
        let value: Value
        let checked: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// The entry for `name` if `secret` is the one it was verified with.
    func lookup(_ name: String, secret: String) -> Entry? {
        let digest = Self.digest(name, secret)
        return entries.withLock { entries in
            guard let entry = entries[name], ConstantTime.equal(entry.digest, digest) else { return nil }
            return entry
        }
    }

    func remember(_ name: String, secret: String, value: Value) {
        let entry = Entry(digest: Self.digest(name, secret), value: value, checked: .now)
        entries.withLock { entries in
            if entries.count >= capacity, entries[name] == nil { entries.removeAll(keepingCapacity: true) }
            entries[name] = entry
        }
    }

    func forget(_ name: String) {
        _ = entries.withLock { $0.removeValue(forKey: name) }
    }

    func forgetAll() {
        entries.withLock { $0.removeAll() }
    }

    private static func digest(_ name: String, _ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data((name + "\u{0}" + secret).utf8)))
    }
}
