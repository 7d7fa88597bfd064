import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import RichPushCore
import RichPushQueue
import RichPushStorage

/// A signed-in console user: who, what they may do, and the token their cookie carries.
struct ConsoleSession: Sendable {
    let token: String
    let user: String
    let access: ConsoleAccess
}

/// Console sessions: the cookie, its record in Redis, and the checks every request passes.
///
/// The cookie `rp_console` holds 256 random bits; Redis holds only their SHA-256 (with the user
/// and a fingerprint of the user's password hash), for ``ConsoleConfiguration/sessionLifetime``.
/// Each request reads the session and the user's record again: a removed user, a changed
/// password or a console role taken away ends every session of theirs at once.
struct ConsoleSessions: Sendable {
    static let cookieName = "rp_console"

    let backend: ConsoleBackend
    let configuration: ConsoleConfiguration

    /// The request's session, or nil (no cookie, or one that names no live session).
    func session(of request: Request) async throws -> ConsoleSession? {
        guard let token = Self.cookie(in: request), Self.isWellFormed(token),
            let fields = try await backend.store.session(token), let name = fields["user"],
            let (stored, access) = try await backend.users.consoleUser(named: name), let access,
            fields["pw"] == Self.fingerprint(stored.passwordHash)
        else { return nil }
        return ConsoleSession(token: token, user: name, access: access)
    }

    /// Starts a session for `user`; the `Set-Cookie` value that carries it.
    func start(user: StoredUser, secure: Bool) async throws -> String {
        let token = try await backend.store.createSession(
            ["user": user.user.name, "pw": Self.fingerprint(user.passwordHash), "created": String(JobQueue.nowMilliseconds())],
            lifetime: configuration.sessionLifetime)
        return Self.cookie(token, maxAge: Int(configuration.sessionLifetime.components.seconds), secure: secure)
    }

    /// Ends the session; the `Set-Cookie` value that clears the cookie.
    func end(_ session: ConsoleSession, secure: Bool) async throws -> String {
        _ = try await backend.store.endSession(session.token)
        return Self.cookie("", maxAge: 0, secure: secure)
    }

    func secure(_ context: APIRequestContext) -> Bool {
        configuration.secureCookie == .always || context.forwardedHTTPS
    }

    /// `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's page or link sends
    /// it), `Path=/console`, `Secure` over TLS.
    static func cookie(_ value: String, maxAge: Int, secure: Bool) -> String {
        "\(cookieName)=\(value); Path=/console; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static func cookie(in request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName {
                    return String(parts[1]).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        return nil
    }

    /// 43 base64url characters (32 bytes), as ``RedisConsoleStore/newToken()`` makes them.
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 43
            && token.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// Changes when the password does, and tells nothing of it.
    static func fingerprint(_ passwordHash: String) -> String {
        SHA256.hash(data: Data(("console-session\u{0}" + passwordHash).utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
    }
}
