import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdBcrypt
import Logging
import NIOPosix
import RichPushCore

/// HTTP Basic authentication for `/api`: 401 with `WWW-Authenticate: Basic` when credentials are
/// missing or wrong, 429 once a user name or an address has failed too often, and in demo mode
/// the tutorial's "user name equals password". bcrypt runs on NIO's thread pool, never on an
/// event loop or the cooperative pool.
struct BasicAuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    let users: any UserStore
    let configuration: AuthConfiguration
    let cache: CredentialCache

    init(users: any UserStore, configuration: AuthConfiguration) {
        self.users = users
        self.configuration = configuration
        self.cache = CredentialCache(ttl: configuration.cacheTTL)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let (name, password) = Self.credentials(request.headers[.authorization]) else {
            throw APIError.unauthorized("send credentials with HTTP Basic authentication")
        }
        var context = context
        context.user = try await authenticate(name: name, password: password, address: context.remoteAddress, logger: context.logger)
        context.logger[metadataKey: "user"] = "\(name)"
        return try await next(request, context)
    }

    private func authenticate(name: String, password: String, address: String, logger: Logger) async throws -> User {
        if configuration.mode == .demo {
            // The tutorial's check; `richpush api --auth-mode demo` warns loudly at start.
            guard !name.isEmpty, name == password, User.validate(name: name) == nil else {
                throw APIError.unauthorized("demo mode: the password must equal the user name")
            }
            return User(name: name, role: .user)
        }
        if let user = cache.user(name: name, password: password) { return user }
        let failures = try await users.failures(user: name, address: address)
        let window = Int(configuration.failureWindow.components.seconds)
        if failures.user >= configuration.maxFailuresPerUser || failures.address >= configuration.maxFailuresPerAddress {
            throw APIError.tooManyRequests("too many failed logins; try again later", retryAfter: window)
        }
        let stored = try await users.user(named: name)
        let hash = stored?.passwordHash ?? Self.decoyHash
        // Verify even for unknown users, so timing does not tell which names exist.
        let valid = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
        guard valid, let stored else {
            _ = try await users.recordFailure(user: name, address: address, window: configuration.failureWindow)
            logger.notice("authentication failed", metadata: ["user": "\(name)", "address": "\(address)"])
            throw APIError.unauthorized("wrong user name or password")
        }
        if failures.user > 0 { try await users.clearFailures(user: name) }
        cache.remember(stored.user, password: password)
        return stored.user
    }

    /// A valid bcrypt hash of nothing anyone knows, to spend the same time on unknown users.
    private static let decoyHash = Bcrypt.hash(UUID().uuidString, cost: 10)

    /// `Authorization: Basic base64(user:password)` → (user, password).
    static func credentials(_ header: String?) -> (String, String)? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic " else { return nil }
        guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let decoded = String(data: data, encoding: .utf8), let colon = decoded.firstIndex(of: ":") else { return nil }
        return (String(decoded[..<colon]), String(decoded[decoded.index(after: colon)...]))
    }
}
