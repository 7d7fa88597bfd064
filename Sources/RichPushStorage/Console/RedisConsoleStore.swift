import Crypto
import Foundation
package import Hiredis

/// What the operator's console keeps in Redis: sessions, single-use confirmations of bulk
/// actions, and the audit log. A session's or confirmation's key is named by the SHA-256 of its
/// random token, never the token itself: a reader of Redis (a dump, `MONITOR`, a replica) learns
/// nothing that signs anyone in or confirms anything.
///
/// Keys (docs/redis-keys.md): `<p>:console:session:<sha256>` (hash, expires with the session),
/// `<p>:console:confirm:<sha256>` (hash, expires unused after its lifetime; taken once), and
/// `<p>:console:audit` (stream, capped at about ``auditCap`` entries).
package struct RedisConsoleStore: Sendable {
    let redis: any RedisClient
    let prefix: String
    /// Audit entries kept (approximately: `XADD … MAXLEN ~`).
    package let auditCap: Int

    package init(redis: any RedisClient, prefix: String, auditCap: Int = 10_000) {
        self.redis = redis
        self.prefix = prefix
        self.auditCap = auditCap
    }

    /// A new random token: 32 bytes (256 bits) from the system's generator, base64url.
    package static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// What a token is stored under.
    static func digest(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    func sessionKey(_ token: String) -> String { "\(prefix):console:session:\(Self.digest(token))" }
    func confirmationKey(_ token: String) -> String { "\(prefix):console:confirm:\(Self.digest(token))" }
    var auditKey: String { "\(prefix):console:audit" }

    // MARK: - Sessions and confirmations

    /// Stores `fields` under a new token for `lifetime`; returns the token.
    package func createSession(_ fields: [String: String], lifetime: Duration) async throws -> String {
        let token = Self.newToken()
        try await put(sessionKey(token), fields, lifetime: lifetime)
        return token
    }

    /// The session's fields, or nil when it does not exist (never made, expired, signed out).
    package func session(_ token: String) async throws -> [String: String]? {
        let fields = Self.strings(try await redis.send("HGETALL", sessionKey(token)))
        return fields.isEmpty ? nil : fields
    }

    /// Ends the session; false when there was none.
    package func endSession(_ token: String) async throws -> Bool {
        try await redis.send("DEL", sessionKey(token)).int == 1
    }

    /// Stores a confirmation under a new token for `lifetime`; returns the token.
    package func createConfirmation(_ fields: [String: String], lifetime: Duration) async throws -> String {
        let token = Self.newToken()
        try await put(confirmationKey(token), fields, lifetime: lifetime)
        return token
    }

    /// Takes the confirmation (it cannot be used twice, even by two requests at once); nil when
    /// it does not exist or expired.
    package func takeConfirmation(_ token: String) async throws -> [String: String]? {
        let fields = Self.strings(try await redis.run(Self.takeScript, TakeCall(key: confirmationKey(token))))
        return fields.isEmpty ? nil : fields
    }

    private func put(_ key: String, _ fields: [String: String], lifetime: Duration) async throws {
        let flat: [any RedisArgument] = fields.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] as [any RedisArgument] }
        try await redis.run(Self.putScript, PutCall(key: key, lifetime: max(lifetime.milliseconds, 1), fields: flat))
    }

    // MARK: - Audit

    /// One entry of the audit log.
    package struct AuditEntry: Sendable, Hashable {
        /// Its stream id (`<ms>-<seq>`): when, and its order.
        package var id: String = ""
        package var user: String
        /// What was done: `sign-in`, `sign-out`, `dlq.replay-selected`, `dlq.replay-matching`, …
        package var action: String
        /// The filter or ids it acted on, as the console shows them.
        package var target: String
        /// How many items it was asked to act on, and how many it acted on.
        package var requested: Int
        package var done: Int
        package var address: String
        /// `ok`, or what went wrong.
        package var outcome: String

        package init(user: String, action: String, target: String, requested: Int, done: Int, address: String, outcome: String = "ok") {
            self.user = user
            self.action = action
            self.target = target
            self.requested = requested
            self.done = done
            self.address = address
            self.outcome = outcome
        }

        /// Milliseconds since 1970, from the id.
        package var at: Int64 { Int64(id.split(separator: "-").first ?? "") ?? 0 }
    }

    /// Appends `entry`; throws when Redis did not take it (the caller must not go on unaudited).
    @discardableResult
    package func audit(_ entry: AuditEntry) async throws -> String {
        var command = RedisCommand("XADD", auditKey, "MAXLEN", "~", auditCap, "*")
        for (name, value) in [
            ("user", entry.user), ("action", entry.action), ("target", entry.target), ("requested", String(entry.requested)),
            ("done", String(entry.done)), ("address", entry.address), ("outcome", entry.outcome),
        ] {
            command.append(name)
            command.append(value)
        }
        return try await redis.send(command).string ?? ""
    }

    /// The newest entries first, at most `count`.
    package func auditLog(count: Int) async throws -> [AuditEntry] {
        let reply = try await redis.send("XREVRANGE", auditKey, "+", "-", "COUNT", count)
        return (reply.array ?? []).compactMap { entry in
            guard let parts = entry.array, parts.count == 2, let id = parts[0].string else { return nil }
            let fields = Self.strings(parts[1])
            var audit = AuditEntry(
                user: fields["user"] ?? "?", action: fields["action"] ?? "?", target: fields["target"] ?? "",
                requested: Int(fields["requested"] ?? "") ?? 0, done: Int(fields["done"] ?? "") ?? 0,
                address: fields["address"] ?? "", outcome: fields["outcome"] ?? "")
            audit.id = id
            return audit
        }
    }

    /// A flat `[name, value, …]` reply as strings.
    static func strings(_ reply: RedisValue) -> [String: String] {
        let flat = reply.array ?? []
        var fields: [String: String] = [:]
        for index in stride(from: 0, to: flat.count - 1, by: 2) {
            if let name = flat[index].string, let value = flat[index + 1].string { fields[name] = value }
        }
        return fields
    }

    // MARK: - Scripts

    /// A hash to write whole, with its lifetime (ms).
    struct PutCall {
        let key: String, lifetime: Int, fields: [any RedisArgument]
    }

    /// Writes the hash and its expiry together: a crash between them cannot leave a session for ever.
    static let putScript = LuaScript<PutCall, Never>(
        [.key("key", \.key), .argument("lifetime", \.lifetime), .list("fields", { $0.fields })],
        body: """
            redis.call('DEL', key)
            redis.call('HSET', key, unpack(ARGV, fieldsFrom, fieldsTo))
            redis.call('PEXPIRE', key, lifetime)
            return fieldsCount

            """)

    struct TakeCall {
        let key: String
    }

    /// Reads the hash and deletes it in one step: of two requests taking it, one gets it.
    static let takeScript = LuaScript<TakeCall, Never>(
        [.key("key", \.key)],
        body: """
            local fields = redis.call('HGETALL', key)
            redis.call('DEL', key)
            return fields

            """)
}
