import Crypto
import RichPushCore
import Synchronization

/// Remembers recently verified credentials as SHA-256 digests of the secret, with what they
/// proved and when: the auth middleware trusts an entry for a while, then revalidates it against
/// Redis (cheap: the stored bcrypt hash unchanged means the password still matches) instead of
/// running bcrypt again, so entries never expire for everyone at once. Changes announced on the
/// credential channel drop entries at once on every replica.
final class CredentialCache<Value: Sendable>: Sendable {
    struct Entry {
        let digest: Digest
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
            guard let entry = entries[name], entry.digest.matches(digest) else { return nil }
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

    /// SHA-256 of `name`, a NUL and `secret`, hashed in place (no joined string, no copy).
    private static func digest(_ name: String, _ secret: String) -> Digest {
        var hasher = SHA256()
        var name = name, secret = secret
        name.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: UInt8(0)) { hasher.update(bufferPointer: $0) }
        secret.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hasher.finalize().withUnsafeBytes { bytes in
            Digest(
                a: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), b: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                c: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), d: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
    }

    /// A SHA-256 digest as four words, compared in constant time without allocating.
    struct Digest: Sendable {
        let a, b, c, d: UInt64

        func matches(_ other: Digest) -> Bool {
            (a ^ other.a) | (b ^ other.b) | (c ^ other.c) | (d ^ other.d) == 0
        }
    }
}
