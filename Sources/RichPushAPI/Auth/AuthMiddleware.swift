import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RichPushCore

/// Authentication for `/api`: HTTP Basic for users (bcrypt, throttled, cached) and Bearer API
/// keys for servers. 401 with `WWW-Authenticate: Basic` when credentials are missing or wrong, 429
/// with `Retry-After` while a (user, address) pair or an address is throttled, 503 when too many
/// bcrypt checks are already queued; in demo mode the tutorial's "user name equals password".
struct AuthMiddleware: RouterMiddleware {
    typealias Context = APIRequestContext

    /// Each app's stores: a caller is authenticated by, and acts in, the app they name.
    let apps: AppDirectory
    let configuration: AuthConfiguration
    let state: AuthState

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        switch Credentials(header: request.headers[.authorization]) {
        case .basic(let name, let password):
            let (user, app) = try await signIn(name)
            context.user = try await authenticate(
                name: user, app: app, password: password, address: context.clientAddress, logger: context.logger)
            context.app = app
            context.logger[metadataKey: "user"] = "\(user)"
            if !app.isDefault { context.logger[metadataKey: "app"] = "\(app)" }
        case .bearer(let token):
            let (key, user, app) = try await authenticate(token: token, logger: context.logger)
            context.user = user
            context.apiKey = key
            context.app = app
            context.logger[metadataKey: "user"] = "\(user.name)"
            context.logger[metadataKey: "apikey.id"] = "\(key.id)"
            if !app.isDefault { context.logger[metadataKey: "app"] = "\(app)" }
        case nil:
            throw APIError.unauthorized("send credentials with HTTP Basic authentication or an API key as a Bearer token")
        }
        return try await next(request, context)
    }

    /// The user and app a Basic user name signs in as: `alice@shop` is user `alice` of app `shop`
    /// when that app exists (`alice@default` is the default app's `alice`); any other name, an
    /// address such as `bob@example.com` included, is a user of the default app.
    private func signIn(_ name: String) async throws -> (user: String, app: AppID) {
        guard let at = name.utf8.lastIndex(of: UInt8(ascii: "@")), at != name.utf8.startIndex,
            let app = AppID(validating: name[name.utf8.index(after: at)...])
        else { return (name, .default) }
        let user = String(name[..<at])
        if app.isDefault { return (user, .default) }
        guard try await apps.contains(app) else { return (name, .default) }
        return (user, app)
    }

    // MARK: - Users (Basic; the console's sign-in too)

    func authenticate(name: String, app: AppID, password: String, address: String, logger: Logger) async throws -> User {
        guard User.validate(name: name) == nil, (1...72).contains(password.utf8.count) else {
            // No such user can exist and no stored password is longer than bcrypt's 72 bytes.
            logger.notice(
                "authentication failed", metadata: ["user": "\(name.prefix(80).logSafe)", "address": "\(address)", "reason": "malformed"])
            throw APIError.unauthorized("wrong user name or password")
        }
        if configuration.mode == .demo {
            // The tutorial's check; `richpush api --auth-mode demo` warns loudly at start.
            guard name == password else { throw APIError.unauthorized("demo mode: the password must equal the user name") }
            return User(name: name, role: .user)
        }
        let users = apps.stores(for: app).users
        // The caches' name: another app's `alice` is not the default app's.
        let cached = app.credentialName(name)
        // A pair with recent failures here goes through the throttle even with a remembered
        // password: else a guesser would learn the right one from a 200 among 429s.
        let pair = cached + "\u{0}" + address
        if !state.suspects.contains(pair), let entry = state.users.lookup(cached, secret: password) {
            if ContinuousClock.now - entry.checked < configuration.cacheTTL { return entry.value.user }
            // Revalidate without bcrypt: the same stored hash still accepts this password.
            if let stored = try await users.user(named: name), stored.passwordHash == entry.value.passwordHash {
                state.users.remember(cached, secret: password, value: stored)
                return stored.user
            }
            state.users.forget(cached)
        }
        let flight = Hex.encode(SHA256.hash(data: Data((cached + "\u{0}" + password).utf8)))
        let stored: StoredUser?
        do {
            stored = try await state.flights.run(flight) { [users, configuration, state] in
                try await Self.verify(
                    name: name, cached: cached, password: password, address: address, users: users, configuration: configuration,
                    state: state)
            }
        } catch let error as APIError where error.status == .tooManyRequests {
            state.suspects.insert(pair)
            throw error
        }
        if stored != nil { state.suspects.remove(pair) }
        guard let stored else {
            state.suspects.insert(pair)
            logger.notice("authentication failed", metadata: ["user": "\(cached.logSafe)", "address": "\(address)"])
            throw APIError.unauthorized("wrong user name or password")
        }
        return stored.user
    }

    /// One throttled bcrypt check; nil when the password is wrong or the user unknown.
    private static func verify(
        name: String, cached: String, password: String, address: String, users: any UserStore,
        configuration: AuthConfiguration, state: AuthState
    ) async throws -> StoredUser? {
        if let wait = try await users.reserveLoginAttempt(user: name, address: address, policy: configuration.throttle) {
            throw APIError.tooManyRequests(
                "too many failed logins for this user from this address; try again in \(wait) s", retryAfter: wait)
        }
        let stored = try await users.user(named: name)
        // Verify even for unknown users, at the cost of the stored hashes, so timing does not tell
        // which names exist.
        if let stored { state.decoy.learn(from: stored.passwordHash) }
        let valid = try await state.gate.verify(password, hash: stored?.passwordHash ?? state.decoy.hash)
        guard valid, let stored else { return nil }
        try await users.loginSucceeded(user: name, address: address)
        state.users.remember(cached, secret: password, value: stored)
        return stored
    }

    // MARK: - API keys (Bearer)

    private func authenticate(token: String, logger: Logger) async throws -> (APIKey, User, AppID) {
        guard let (app, id) = APIKey.parse(token: token) else {
            throw APIError.invalidToken("the Bearer token is not a RichPush API key (rpk_…)")
        }
        // The caches' name: ids are random, but a key is its app's.
        let cached = app.credentialName(id)
        if let entry = state.keys.lookup(cached, secret: token), ContinuousClock.now - entry.checked < configuration.cacheTTL {
            return (entry.value.0, entry.value.1, app)
        }
        guard try await apps.contains(app), let (key, user) = try await apps.stores(for: app).apiKeys.verify(token: token) else {
            state.keys.forget(cached)
            logger.notice("authentication failed", metadata: ["apikey.id": "\(cached)"])
            throw APIError.invalidToken("unknown or revoked API key")
        }
        state.keys.remember(cached, secret: token, value: (key, user))
        return (key, user, app)
    }
}

/// What the auth middleware shares across requests: caches, in-flight checks, the bcrypt gate.
final class AuthState: Sendable {
    let users = CredentialCache<StoredUser>()
    let keys = CredentialCache<(APIKey, User)>()
    let flights = SingleFlight<StoredUser?>()
    /// (user, address) pairs that failed here recently: they skip the credential cache.
    let suspects: ExpiringSet
    let gate: BcryptGate
    /// What unknown user names are checked against, at the cost of the stored hashes.
    let decoy: DecoyHash

    /// Called with the name of a changed or removed user, after its credentials were dropped.
    let userChanged: @Sendable (String) -> Void

    init(configuration: AuthConfiguration, userChanged: @escaping @Sendable (String) -> Void = { _ in }) {
        self.userChanged = userChanged
        suspects = ExpiringSet(lifetime: configuration.throttle.memory)
        gate = BcryptGate(concurrency: configuration.bcryptConcurrency, queueLimit: configuration.bcryptQueueLimit)
        decoy = DecoyHash(cost: configuration.bcryptCost)
    }

    /// Applies a change announced on the credential channel: `user:<name>` or `key:<id>`.
    func apply(change: String) {
        if change.hasPrefix("user:") {
            forgetUser(String(change.dropFirst(5)))
        } else if change.hasPrefix("key:") {
            keys.forget(String(change.dropFirst(4)))
        }
    }

    private func forgetUser(_ name: String) {
        users.forget(name)
        userChanged(name)
        // A user's keys act as the user: drop them too (they revalidate on next use).
        keys.forgetAll()
    }
}
