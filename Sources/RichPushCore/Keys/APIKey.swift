/// A credential for server-to-server senders: `Authorization: Bearer rpk_<id>_<secret>`
/// (`rpk_<app>.<id>_<secret>` in an app other than the default). It acts as its user, in its
/// app, limited to its scopes; only a SHA-256 digest of the whole token is stored, so
/// checking one costs a hash and a lookup, not a bcrypt.
package struct APIKey: Sendable, Hashable {
    /// What a key may do.
    package enum Scope: String, Sendable, Hashable, CaseIterable, Comparable {
        /// `POST /api/notifications`.
        case send
        /// Reading notifications, their status and list, and posting receipts.
        case read
        /// Every route its user may call, registrations included (not ``manage``).
        case admin
        /// Registering, updating and removing its user's devices only: what an app ships inside its
        /// client (Azure Notification Hubs' Listen right).
        case listen
        /// The app's own credentials (`GET`/`PATCH /api/apps/{its app}`); only for an admin's key,
        /// and never implied by ``admin`` (Notification Hubs' Manage right).
        case manage

        package static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// 16 lowercase hex digits, shown by `richpush keys list`.
    package var id: String
    package var user: String
    package var scopes: Set<Scope>
    /// The operator's label for the key.
    package var label: String
    /// Milliseconds since 1970.
    package var createdAt: Int64

    package init(id: String, user: String, scopes: Set<Scope>, label: String, createdAt: Int64) {
        self.id = id
        self.user = user
        self.scopes = scopes
        self.label = label
        self.createdAt = createdAt
    }

    /// Whether the key covers a route that needs `scope` (`admin` covers everything but `manage`).
    package func allows(_ scope: Scope) -> Bool { scopes.contains(scope) || (scope != .manage && scopes.contains(.admin)) }

    /// The id inside a token `rpk_<16 hex>_<secret>` or `rpk_<app>.<16 hex>_<secret>`, or nil
    /// when it does not have that shape.
    package static func id(inToken token: String) -> String? { parse(token: token)?.id }

    /// The app and the id inside a token: `rpk_<16 hex>_<secret>` is the default app's,
    /// `rpk_<app>.<16 hex>_<secret>` another app's (`.` is in no app id and no id); nil when it
    /// has neither shape. The secret is 43 base64url characters (32 random bytes).
    package static func parse(token: String) -> (app: AppID, id: String)? {
        let utf8 = token.utf8
        guard utf8.count <= 4 + 33 + 16 + 1 + 43, token.hasPrefix("rpk_") else { return nil }
        var rest = token.dropFirst(4)
        var app = AppID.default
        if let dot = rest.firstIndex(of: ".") {
            guard let named = AppID(validating: rest[..<dot]), !named.isDefault else { return nil }
            app = named
            rest = rest[rest.index(after: dot)...]
        }
        guard rest.utf8.count == 16 + 1 + 43 else { return nil }
        let id = rest.prefix(16)
        guard id.utf8.allSatisfy(isHexDigit), rest.dropFirst(16).first == "_" else { return nil }
        guard rest.dropFirst(17).utf8.allSatisfy(isBase64URL) else { return nil }
        return (app, String(id))
    }

    /// A token for key `id` of `app` with `secret` (43 base64url characters).
    package static func token(app: AppID, id: String, secret: String) -> String {
        app.isDefault ? "rpk_\(id)_\(secret)" : "rpk_\(app.rawValue).\(id)_\(secret)"
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        isHexDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

/// Where API keys live (Redis in production).
package protocol APIKeyStore: Sendable {
    /// Creates a key for an existing user; returns it with its token, which is shown only once.
    /// Nil when there is no such user.
    func create(user: String, scopes: Set<APIKey.Scope>, label: String) async throws -> (key: APIKey, token: String)?
    /// Keys of one user, or of everyone.
    func list(user: String?) async throws -> [APIKey]
    /// Deletes a key; false if there was none.
    func revoke(id: String) async throws -> Bool
    /// The key and its user's current record when `token` is a live key, else nil.
    func verify(token: String) async throws -> (key: APIKey, user: User)?
}
