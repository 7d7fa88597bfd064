package import Crypto
import Foundation
package import Hiredis
package import RichPushCore
import Synchronization

/// Signs and checks the media URLs that alerts carry: a notification service extension fetches
/// the rich payload without the user's password, by a URL made for one device and one
/// notification that stops working at its expiry. The URL is
/// `<api>/media/<app>/<id>?installation=<installation>&expires=<seconds since 1970>&signature=<hex>`,
/// the signature an HMAC-SHA256 of the app, the id, the installation and the expiry under a key
/// kept in Redis (made by the first process that needs it, so every API and worker shares it).
package final class MediaURLSigner: Sendable {
    /// Where the key is kept; nil for a signer made with its key.
    private let store: (redis: any RedisClient, key: String)?
    /// The key's bytes, once loaded.
    private let loaded: Mutex<[UInt8]?>

    package init(redis: any RedisClient, keys: StorageKeys) {
        self.store = (redis, keys.mediaKey)
        self.loaded = Mutex(nil)
    }

    /// A signer over the key given (tests).
    package init(keyBytes: [UInt8]) {
        self.store = nil
        self.loaded = Mutex(keyBytes)
    }

    /// The signed URL of notification `id`'s payload for `installation` of `app`, valid until
    /// `expires` (seconds since 1970), under `base` (the API's URL).
    package func url(base: String, app: AppID, id: Int, installation: String, expires: Int64) async throws -> String {
        Self.url(key: try await key(), base: base, app: app, id: id, installation: installation, expires: expires)
    }

    /// ``url(base:app:id:installation:expires:)`` under `key` (``key()``), without waiting.
    package static func url(key: SymmetricKey, base: String, app: AppID, id: Int, installation: String, expires: Int64) -> String {
        let signature = signature(key, app: app, id: id, installation: installation, expires: expires)
        let query = installation.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? installation
        return "\(base)/media/\(app.rawValue)/\(id)?installation=\(query)&expires=\(expires)&signature=\(signature)"
    }

    /// Whether `signature` is this key's for (`app`, `id`, `installation`, `expires`); compared
    /// in constant time. The expiry is the caller's to check.
    package func isValid(signature: String, app: AppID, id: Int, installation: String, expires: Int64) async throws -> Bool {
        guard signature.utf8.count == 64, let given = Hex.decode(signature) else { return false }
        let key = try await key()
        return HMAC<SHA256>.isValidAuthenticationCode(
            given, authenticating: Self.message(app: app, id: id, installation: installation, expires: expires), using: key)
    }

    static func signature(_ key: SymmetricKey, app: AppID, id: Int, installation: String, expires: Int64) -> String {
        Hex.encode(
            HMAC<SHA256>.authenticationCode(for: message(app: app, id: id, installation: installation, expires: expires), using: key))
    }

    /// What is signed: the four values, each ended by a zero byte (none of them holds one).
    private static func message(app: AppID, id: Int, installation: String, expires: Int64) -> [UInt8] {
        var bytes: [UInt8] = Array("media".utf8) + [0]
        for part in [app.rawValue, String(id), installation, String(expires)] { bytes += Array(part.utf8) + [0] }
        return bytes
    }

    /// The key: loaded once from Redis, or made there by the first process that asks (`SET NX`,
    /// so two processes starting together end with the same key).
    package func key() async throws -> SymmetricKey {
        if let bytes = loaded.withLock({ $0 }) { return SymmetricKey(data: bytes) }
        guard let (redis, name) = store else { throw RedisError(code: .closed, message: "no media key") }
        let made = Hex.encode(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
        let replies = try await redis.pipeline([
            RedisCommand("SET", name, made, "NX"), RedisCommand("GET", name),
        ])
        try replies[0].throwingError()
        guard let text = replies[1].string, text.utf8.count == 64, let bytes = Hex.decode(text) else {
            throw RedisError(code: .unexpectedReply, message: "\(name) does not hold a 64-digit hex key")
        }
        loaded.withLock { $0 = bytes }
        return SymmetricKey(data: bytes)
    }
}
