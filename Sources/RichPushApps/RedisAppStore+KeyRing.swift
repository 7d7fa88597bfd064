import Foundation
import Hiredis
import RichPushCore

extension RedisAppStore {
    /// What ``checkKeyRing()`` found: how many sealed credentials, under which keys.
    package struct KeyRingCheck: Sendable, Hashable {
        package var sealed: Int
        /// Key id → how many credentials it sealed.
        package var byKey: [String: Int]
    }

    /// Opens every stored credential with the ring, so a process given the wrong key-encryption key
    /// fails at start with a message saying which key is missing, not at its first push.
    @discardableResult
    package func checkKeyRing() async throws -> KeyRingCheck {
        var check = KeyRingCheck(sealed: 0, byKey: [:])
        for (id, fields) in try await allFields() {
            for field in Self.sealedFields {
                guard let sealed = fields[field] else { continue }
                _ = try CredentialSealer.open(sealed, app: id, field: field, ring: ring)
                check.sealed += 1
                check.byKey[CredentialSealer.keyID(of: sealed) ?? "?", default: 0] += 1
            }
        }
        return check
    }

    /// Re-seals every credential not sealed under the ring's current key (after a rotation, once
    /// every process holds the new key as current and the old one as previous); returns how many.
    package func rekey() async throws -> Int {
        guard let ring else { throw AppError.noKeyEncryptionKey }
        var resealed = 0
        for (id, _) in try await allFields() {
            for _ in 0..<10 {
                let fields = Self.fields(try await redis.send("HGETALL", keys.app(id)))
                guard let version = fields["version"] else { break }
                var changed: [String: String] = [:]
                for field in Self.sealedFields {
                    guard let sealed = fields[field], CredentialSealer.keyID(of: sealed) != ring.current.id else { continue }
                    let plaintext = try CredentialSealer.open(sealed, app: id, field: field, ring: ring)
                    changed[field] = try CredentialSealer.seal(plaintext, app: id, field: field, with: ring.current)
                }
                if changed.isEmpty { break }
                let json = String(decoding: try JSONSerialization.data(withJSONObject: changed, options: [.sortedKeys]), as: UTF8.self)
                if try await redis.run(Self.resealScript, ResealCall(app: keys.app(id), version: version, fields: json)).int == 1 {
                    resealed += changed.count
                    break
                }
            }
        }
        return resealed
    }

    /// The fields of an app's hash that hold something sealed: each platform's credentials and the
    /// Notification Hubs rules.
    static var sealedFields: [String] { AppPlatform.allCases.map(\.rawValue) + [nhField] }

    private func allFields() async throws -> [(AppID, [String: String])] {
        var ids = Set((try await redis.send("SMEMBERS", keys.all).array ?? []).compactMap { $0.string.flatMap { try? AppID($0) } })
        ids.insert(.default)
        let ordered = ids.sorted()
        let replies = try await redis.sendAll(ordered.map { RedisCommand("HGETALL", keys.app($0)) })
        return zip(ordered, replies.map(Self.fields)).filter { !$0.1.isEmpty }
    }
}
